-- The free tier: one row per key (a wallet or a client address, scoped by
-- service and op), rewritten in place. day_num is the UTC day number (Unix ms
-- / 86,400,000); last_ms the time of the last allowed call.
CREATE TABLE free_use (
	caller_key TEXT PRIMARY KEY,
	day_num    INTEGER NOT NULL,
	used       INTEGER NOT NULL,
	last_ms    INTEGER NOT NULL
) STRICT;

-- The payments seen-set: a verified payment is recorded before its op runs.
-- Its signature and its memo digest (never the memo) are each UNIQUE. The
-- lease (token, end) says who may run the op and deliver; resumes_used counts
-- the one resume a payment allows.
CREATE TABLE payments (
	id                TEXT PRIMARY KEY,
	rail              TEXT NOT NULL,
	tx                TEXT NOT NULL UNIQUE,
	memo_digest       TEXT NOT NULL UNIQUE,
	op                TEXT NOT NULL CHECK (op IN ('check', 'memo', 'probe')),
	payer             TEXT NOT NULL,
	amount_usdc_units TEXT NOT NULL,
	fee_lamports      TEXT NOT NULL,
	verified_ms       INTEGER NOT NULL,
	lease_token       TEXT,
	lease_until_ms    INTEGER NOT NULL,
	resumes_used      INTEGER NOT NULL DEFAULT 0 CHECK (resumes_used IN (0, 1)),
	delivered_ms      INTEGER
) STRICT;

-- The ledger, one table per op. The columns are exactly the op's closed field
-- list in the criteria, plus the id key; a test compares them. Adding a
-- column needs a criteria version change first.
CREATE TABLE ledger_check (
	id                   TEXT PRIMARY KEY REFERENCES payments (id),
	payer_wallet         TEXT NOT NULL,
	"timestamp"          TEXT NOT NULL,
	"day"                TEXT NOT NULL,
	price_usdc_units     TEXT NOT NULL,
	cad_rate             TEXT,
	cad_rate_date        TEXT,
	cad_basis            TEXT NOT NULL,
	cad_pending          INTEGER NOT NULL CHECK (cad_pending IN (0, 1)),
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	payability_state     TEXT NOT NULL,
	description_overlong INTEGER NOT NULL CHECK (description_overlong IN (0, 1)),
	house                INTEGER NOT NULL CHECK (house IN (0, 1))
) STRICT;
CREATE INDEX ledger_check_timestamp ON ledger_check ("timestamp");

CREATE TABLE ledger_memo (
	id                   TEXT PRIMARY KEY REFERENCES payments (id),
	payer_wallet         TEXT NOT NULL,
	"timestamp"          TEXT NOT NULL,
	"day"                TEXT NOT NULL,
	price_usdc_units     TEXT NOT NULL,
	cad_rate             TEXT,
	cad_rate_date        TEXT,
	cad_basis            TEXT NOT NULL,
	cad_pending          INTEGER NOT NULL CHECK (cad_pending IN (0, 1)),
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	memo_binding_state   TEXT NOT NULL,
	house                INTEGER NOT NULL CHECK (house IN (0, 1))
) STRICT;
CREATE INDEX ledger_memo_timestamp ON ledger_memo ("timestamp");

CREATE TABLE ledger_probe (
	id                   TEXT PRIMARY KEY REFERENCES payments (id),
	payer_wallet         TEXT NOT NULL,
	"timestamp"          TEXT NOT NULL,
	"day"                TEXT NOT NULL,
	price_usdc_units     TEXT NOT NULL,
	cad_rate             TEXT,
	cad_rate_date        TEXT,
	cad_basis            TEXT NOT NULL,
	cad_pending          INTEGER NOT NULL CHECK (cad_pending IN (0, 1)),
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	direct_grade         TEXT NOT NULL,
	facilitator_grade    TEXT NOT NULL,
	exposures_count      INTEGER NOT NULL CHECK (exposures_count >= 0),
	house                INTEGER NOT NULL CHECK (house IN (0, 1))
) STRICT;
CREATE INDEX ledger_probe_timestamp ON ledger_probe ("timestamp");
