-- The monitor's history: what payability itself observed, one row per
-- endpoint (its config id), op and scheduled slot (the Unix second its
-- period starts), so a slot observed twice (two instances, or a retried
-- job) is recorded once. Closed-form values only: the state word, reason
-- codes joined by commas, the duration, the preflight's terms hash; never
-- fetched content.
CREATE TABLE observations (
	endpoint     TEXT NOT NULL CHECK (length(endpoint) BETWEEN 1 AND 64),
	op           TEXT NOT NULL CHECK (op IN ('preflight', 'lint', 'check', 'memo', 'probe')),
	slot         BIGINT NOT NULL,
	at_ms        BIGINT NOT NULL,
	passing      BIGINT NOT NULL CHECK (passing IN (0, 1)),
	state        TEXT NOT NULL,
	reasons      TEXT NOT NULL,
	duration_ms  BIGINT NOT NULL,
	terms_sha256 TEXT NOT NULL CHECK (terms_sha256 = '' OR length(terms_sha256) = 64),
	PRIMARY KEY (endpoint, op, slot)
);
CREATE INDEX observations_by_time ON observations (endpoint, op, at_ms);
CREATE INDEX observations_at ON observations (at_ms);
