-- The per-endpoint summary the status page reads instead of the history,
-- kept up to date as observations land (in the transaction that adds one)
-- and backfilled here from the history already kept: per endpoint and UTC
-- day (days since the epoch) the checks and how many passed; per endpoint
-- and op the newest slot, its outcome, and the slot of the observation that
-- last changed the outcome (-1: none).
CREATE TABLE observation_days (
	endpoint TEXT NOT NULL,
	day      INTEGER NOT NULL,
	checks   INTEGER NOT NULL,
	passing  INTEGER NOT NULL,
	PRIMARY KEY (endpoint, day)
) STRICT;
CREATE TABLE observation_runs (
	endpoint    TEXT NOT NULL,
	op          TEXT NOT NULL,
	slot        INTEGER NOT NULL,
	passing     INTEGER NOT NULL CHECK (passing IN (0, 1)),
	change_slot INTEGER NOT NULL,
	PRIMARY KEY (endpoint, op)
) STRICT;
INSERT INTO observation_days (endpoint, day, checks, passing)
SELECT endpoint, at_ms / 86400000, COUNT(*), SUM(passing) FROM observations GROUP BY endpoint, at_ms / 86400000;
INSERT INTO observation_runs (endpoint, op, slot, passing, change_slot)
SELECT endpoint, op, MAX(slot), 0, COALESCE(MAX(CASE WHEN prev <> passing THEN slot END), -1)
FROM (SELECT endpoint, op, slot, passing, LAG(passing) OVER (PARTITION BY endpoint, op ORDER BY slot) AS prev FROM observations) AS o
GROUP BY endpoint, op;
UPDATE observation_runs SET passing = (SELECT x.passing FROM observations x
	WHERE x.endpoint = observation_runs.endpoint AND x.op = observation_runs.op AND x.slot = observation_runs.slot);
