-- Issue 25: the third paid service, x402-preflight (ops preflight and lint).
-- The closed op sets of payments, settlements and refunds gain the two ops,
-- and each op gets its own ledger table, as the seed ops have.
--
-- SQLite cannot alter a CHECK constraint, and rebuilding payments would
-- need foreign keys off (impossible inside the migration's transaction:
-- the ledger tables reference it). A wider CHECK holds for every existing
-- row, so the table's stored definition is rewritten in place, the
-- procedure SQLite documents for such changes (lang_altertable.html,
-- "Making Other Kinds Of Table Schema Changes"); the CREATE TABLEs below
-- then bump the schema cookie, so every connection reads the new schema.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql, 'CHECK (op IN (''check'', ''memo'', ''probe''))',
	'CHECK (op IN (''check'', ''memo'', ''probe'', ''preflight'', ''lint''))')
WHERE type = 'table' AND name IN ('payments', 'settlements');
UPDATE sqlite_schema
SET sql = replace(sql, 'CHECK (entry_op IN (''check'', ''memo'', ''probe''))',
	'CHECK (entry_op IN (''check'', ''memo'', ''probe'', ''preflight'', ''lint''))')
WHERE type = 'table' AND name = 'refunds';
PRAGMA writable_schema = RESET;

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
	cad_pending          INTEGER NOT NULL CHECK (cad_pending IN (0, 1)),
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	payment_network      TEXT,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	decision             TEXT NOT NULL CHECK (decision IN ('GO', 'HOLD', 'STOP')),
	reasons              TEXT NOT NULL CHECK (length(reasons) <= 512),
	house                INTEGER NOT NULL CHECK (house IN (0, 1))
) STRICT;
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
	cad_pending          INTEGER NOT NULL CHECK (cad_pending IN (0, 1)),
	refund               TEXT,
	payment_tx           TEXT NOT NULL UNIQUE,
	payment_network      TEXT,
	solana_fee_lamports  TEXT NOT NULL,
	criteria_version     TEXT NOT NULL,
	verdict_line         TEXT NOT NULL,
	conforms             INTEGER NOT NULL CHECK (conforms IN (0, 1)),
	errors_count         INTEGER NOT NULL CHECK (errors_count >= 0),
	warnings_count       INTEGER NOT NULL CHECK (warnings_count >= 0),
	house                INTEGER NOT NULL CHECK (house IN (0, 1))
) STRICT;
CREATE INDEX ledger_lint_timestamp ON ledger_lint ("timestamp");

-- Append-only, as the seed ops' ledgers (0002).
CREATE TRIGGER ledger_preflight_fill_only BEFORE UPDATE ON ledger_preflight
WHEN NOT (OLD.cad_pending = 1 AND NEW.cad_pending = 0
		AND OLD.cad_rate IS NULL AND OLD.cad_rate_date IS NULL
		AND NEW.cad_rate IS NOT NULL AND NEW.cad_rate_date IS NOT NULL
		AND NEW.id IS OLD.id
		AND NEW.payer_wallet IS OLD.payer_wallet
		AND NEW."timestamp" IS OLD."timestamp"
		AND NEW."day" IS OLD."day"
		AND NEW.price_usdc_units IS OLD.price_usdc_units
		AND NEW.cad_basis IS OLD.cad_basis
		AND NEW.refund IS OLD.refund
		AND NEW.payment_tx IS OLD.payment_tx
		AND NEW.payment_network IS OLD.payment_network
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.decision IS OLD.decision
		AND NEW.reasons IS OLD.reasons
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
CREATE TRIGGER ledger_preflight_no_delete BEFORE DELETE ON ledger_preflight
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

CREATE TRIGGER ledger_lint_fill_only BEFORE UPDATE ON ledger_lint
WHEN NOT (OLD.cad_pending = 1 AND NEW.cad_pending = 0
		AND OLD.cad_rate IS NULL AND OLD.cad_rate_date IS NULL
		AND NEW.cad_rate IS NOT NULL AND NEW.cad_rate_date IS NOT NULL
		AND NEW.id IS OLD.id
		AND NEW.payer_wallet IS OLD.payer_wallet
		AND NEW."timestamp" IS OLD."timestamp"
		AND NEW."day" IS OLD."day"
		AND NEW.price_usdc_units IS OLD.price_usdc_units
		AND NEW.cad_basis IS OLD.cad_basis
		AND NEW.refund IS OLD.refund
		AND NEW.payment_tx IS OLD.payment_tx
		AND NEW.payment_network IS OLD.payment_network
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.conforms IS OLD.conforms
		AND NEW.errors_count IS OLD.errors_count
		AND NEW.warnings_count IS OLD.warnings_count
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
CREATE TRIGGER ledger_lint_no_delete BEFORE DELETE ON ledger_lint
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
