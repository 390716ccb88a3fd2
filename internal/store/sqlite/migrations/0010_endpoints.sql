-- The monitor's endpoints live in the store: the configuration file seeds
-- them, the API and the catalog imports manage them. endpoints holds each
-- definition (the configuration's fields, ops as a comma list), its
-- retirement (retired_ms, 0 active) and, kept current as observations land
-- (in the transaction that adds one), the newest observation of its status
-- op (status_slot, -1 none; status_state; status_at_ms) and the network the
-- newest preflight selected: the per-endpoint summary the lists and their
-- filters read. endpoint_sources says which sources list an endpoint and
-- when each last did (last_seen_ms; the configuration and the API never go
-- stale). endpoint_version changes with every change of the set.
CREATE TABLE endpoints (
	id               TEXT PRIMARY KEY,
	url              TEXT NOT NULL,
	method           TEXT NOT NULL,
	body             TEXT NOT NULL,
	ops              TEXT NOT NULL,
	every_s          INTEGER NOT NULL,
	network          TEXT NOT NULL,
	max_amount       TEXT NOT NULL,
	status_op        TEXT NOT NULL,
	retired_ms       INTEGER NOT NULL DEFAULT 0,
	status_slot      INTEGER NOT NULL DEFAULT -1,
	status_state     TEXT NOT NULL DEFAULT '',
	status_at_ms     INTEGER NOT NULL DEFAULT 0,
	observed_network TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX endpoints_active ON endpoints (retired_ms, id);
CREATE INDEX endpoints_status ON endpoints (status_state, id);
CREATE INDEX endpoints_network ON endpoints (network, id);
CREATE INDEX endpoints_observed_network ON endpoints (observed_network, id);
CREATE TABLE endpoint_sources (
	endpoint     TEXT NOT NULL,
	source       TEXT NOT NULL,
	last_seen_ms INTEGER NOT NULL,
	PRIMARY KEY (endpoint, source)
) STRICT;
CREATE INDEX endpoint_sources_source ON endpoint_sources (source, endpoint);
CREATE TABLE endpoint_version (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO endpoint_version (id, n) VALUES (1, 0);
