-- Issue 11: a bounded store. free_source is the per-source ceiling of the
-- free tier (all callers from one client address, IPv4 /32 or IPv6 /64,
-- scoped by service), one row per source rewritten in place like free_use.
-- It has no tally trigger: the calls it counts are counted in free_use.
-- The indexes serve the prune job, which deletes free-tier rows two days
-- after their last allowed call and settlement records two days after they
-- were created (docs/operations.md, "Retention").
CREATE TABLE free_source (
	source_key TEXT PRIMARY KEY,
	day_num    INTEGER NOT NULL,
	used       INTEGER NOT NULL,
	last_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX free_source_last ON free_source (last_ms);
CREATE INDEX free_use_last ON free_use (last_ms);
CREATE INDEX settlements_created ON settlements (created_ms);
