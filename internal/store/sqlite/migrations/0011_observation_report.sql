-- The ecosystem report (docs/monitor.md, "The ecosystem report"): each
-- observation keeps the scheme (a closed set: exact, upto, other) and the
-- x402 version of the entry its op graded, and the source the endpoint was
-- listed from (config, api, or a catalog's label). Closed-form values only.
-- observation_states counts the observations per UTC day (days since the
-- epoch), op and state, kept as observations land (in the transaction that
-- adds one) and backfilled here from the history already kept.
ALTER TABLE observations ADD COLUMN scheme TEXT NOT NULL DEFAULT '' CHECK (length(scheme) <= 16);
ALTER TABLE observations ADD COLUMN x402_version INTEGER NOT NULL DEFAULT 0 CHECK (x402_version BETWEEN 0 AND 255);
ALTER TABLE observations ADD COLUMN source TEXT NOT NULL DEFAULT '' CHECK (length(source) <= 64);
CREATE TABLE observation_states (
	day    INTEGER NOT NULL,
	op     TEXT NOT NULL,
	state  TEXT NOT NULL,
	checks INTEGER NOT NULL,
	PRIMARY KEY (day, op, state)
) STRICT;
INSERT INTO observation_states (day, op, state, checks)
SELECT at_ms / 86400000, op, state, COUNT(*) FROM observations GROUP BY at_ms / 86400000, op, state;
-- The webhooks' alert policy (failures_before_alert,
-- successes_before_resolve): per endpoint and op the outcome last announced
-- (passing 0/1), the observations in a row that contradict it, the newest
-- slot counted and the slot that last changed the announcement (-1: none).
CREATE TABLE alert_states (
	endpoint   TEXT NOT NULL,
	op         TEXT NOT NULL,
	passing    INTEGER NOT NULL CHECK (passing IN (0, 1)),
	streak     INTEGER NOT NULL CHECK (streak >= 0),
	last_slot  INTEGER NOT NULL,
	fired_slot INTEGER NOT NULL,
	PRIMARY KEY (endpoint, op)
) STRICT;
