-- Issue 25: the third paid service, x402-preflight (ops preflight and lint).
-- The closed op sets of payments, settlements and refunds gain the two ops,
-- and each op gets its own ledger table, as the seed ops have.
ALTER TABLE payments DROP CONSTRAINT payments_op_check,
	ADD CONSTRAINT payments_op_check CHECK (op IN ('check', 'memo', 'probe', 'preflight', 'lint'));
ALTER TABLE settlements DROP CONSTRAINT settlements_op_check,
	ADD CONSTRAINT settlements_op_check CHECK (op IN ('check', 'memo', 'probe', 'preflight', 'lint'));
ALTER TABLE refunds DROP CONSTRAINT refunds_entry_op_check,
	ADD CONSTRAINT refunds_entry_op_check CHECK (entry_op IN ('check', 'memo', 'probe', 'preflight', 'lint'));

-- The ledger of the preflight op: the common columns of every ledger table,
-- (payment_network as 0008 added to the seed ops' tables),
-- then the decision (GO, HOLD or STOP) and its reason codes (the closed
-- codes of x402-preflight/v1, space-separated, '' for none).
CREATE TABLE ledger_preflight (
	id                   TEXT PRIMARY KEY REFERENCES payments (id),
	payer_wallet         TEXT NOT NULL,
	"timestamp"          TEXT NOT NULL,
	"day"                TEXT NOT NULL,
	price_usdc_units     TEXT NOT NULL,
	cad_rate             TEXT,
	cad_rate_date        TEXT,
	cad_basis            TEXT NOT NULL,
	cad_pending          BOOLEAN NOT NULL,
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	payment_network      TEXT,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	decision             TEXT NOT NULL CHECK (decision IN ('GO', 'HOLD', 'STOP')),
	reasons              TEXT NOT NULL CHECK (length(reasons) <= 512),
	house                BOOLEAN NOT NULL
);
CREATE INDEX ledger_preflight_timestamp ON ledger_preflight ("timestamp");

-- The ledger of the lint op: whether the challenge conforms, and the counts
-- of error and warn findings.
CREATE TABLE ledger_lint (
	id                   TEXT PRIMARY KEY REFERENCES payments (id),
	payer_wallet         TEXT NOT NULL,
	"timestamp"          TEXT NOT NULL,
	"day"                TEXT NOT NULL,
	price_usdc_units     TEXT NOT NULL,
	cad_rate             TEXT,
	cad_rate_date        TEXT,
	cad_basis            TEXT NOT NULL,
	cad_pending          BOOLEAN NOT NULL,
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	payment_network      TEXT,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	conforms             BOOLEAN NOT NULL,
	errors_count         INTEGER NOT NULL CHECK (errors_count >= 0),
	warnings_count       INTEGER NOT NULL CHECK (warnings_count >= 0),
	house                BOOLEAN NOT NULL
);
CREATE INDEX ledger_lint_timestamp ON ledger_lint ("timestamp");

-- Append-only, as the seed ops' ledgers (0002).
CREATE TRIGGER ledger_preflight_fill_only BEFORE UPDATE OR DELETE ON ledger_preflight
	FOR EACH ROW EXECUTE FUNCTION ledger_fill_only();
CREATE TRIGGER ledger_lint_fill_only BEFORE UPDATE OR DELETE ON ledger_lint
	FOR EACH ROW EXECUTE FUNCTION ledger_fill_only();
