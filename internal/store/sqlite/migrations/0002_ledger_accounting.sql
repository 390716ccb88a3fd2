-- The ledger issue: the cached daily rates of the CAD valuation, refunds as
-- records of their own, the daily free-use tally the tripwires read, and the
-- ledger's append-only rule as triggers, so it holds whatever writes.

-- Published daily rates (CAD per USD), cached as first fetched: a date keeps
-- its first value.
CREATE TABLE cad_rates (
	rate_date   TEXT PRIMARY KEY,
	cad_per_usd TEXT NOT NULL,
	fetched_at  TEXT NOT NULL
) STRICT;

-- A refund is its own record linked to one entry (op, id); the entry is
-- never edited. One refund per entry. No URL, memo or challenge value: the
-- link and the refund transaction only.
CREATE TABLE refunds (
	id          TEXT PRIMARY KEY,
	entry_op    TEXT NOT NULL CHECK (entry_op IN ('check', 'memo', 'probe')),
	entry_id    TEXT NOT NULL,
	refund_tx   TEXT NOT NULL,
	"timestamp" TEXT NOT NULL,
	"day"       TEXT NOT NULL,
	UNIQUE (entry_op, entry_id)
) STRICT;
CREATE INDEX refunds_timestamp ON refunds ("timestamp");

-- Allowed free calls per scope (the service: the part of the free-tier key
-- before its first '|') and UTC day number. free_use keeps one row per key
-- for the current day only, so the history the tripwires need lives here,
-- counted by a trigger in the very statement that allows the call.
CREATE TABLE free_use_daily (
	scope   TEXT NOT NULL,
	day_num INTEGER NOT NULL,
	allowed INTEGER NOT NULL,
	PRIMARY KEY (scope, day_num)
) STRICT;

-- The calls allowed before this migration: each key's count of its last day.
INSERT INTO free_use_daily (scope, day_num, allowed)
SELECT CASE WHEN instr(free_use.caller_key, '|') > 0 THEN substr(free_use.caller_key, 1, instr(free_use.caller_key, '|') - 1) ELSE '' END, day_num, SUM(used) FROM free_use GROUP BY 1, 2;

CREATE TRIGGER free_use_daily_insert AFTER INSERT ON free_use
BEGIN
	INSERT INTO free_use_daily (scope, day_num, allowed)
	VALUES (CASE WHEN instr(NEW.caller_key, '|') > 0 THEN substr(NEW.caller_key, 1, instr(NEW.caller_key, '|') - 1) ELSE '' END, NEW.day_num, 1)
	ON CONFLICT (scope, day_num) DO UPDATE SET allowed = allowed + 1;
END;

CREATE TRIGGER free_use_daily_update AFTER UPDATE ON free_use
BEGIN
	INSERT INTO free_use_daily (scope, day_num, allowed)
	VALUES (CASE WHEN instr(NEW.caller_key, '|') > 0 THEN substr(NEW.caller_key, 1, instr(NEW.caller_key, '|') - 1) ELSE '' END, NEW.day_num, 1)
	ON CONFLICT (scope, day_num) DO UPDATE SET allowed = allowed + 1;
END;

-- Ledger entries are never deleted, and never edited but for one step: a
-- pending entry gets its rate and rate date once (cad_pending 1 -> 0), every
-- other column unchanged.
CREATE TRIGGER ledger_check_fill_only BEFORE UPDATE ON ledger_check
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
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.payability_state IS OLD.payability_state
		AND NEW.description_overlong IS OLD.description_overlong
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
CREATE TRIGGER ledger_check_no_delete BEFORE DELETE ON ledger_check
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

CREATE TRIGGER ledger_memo_fill_only BEFORE UPDATE ON ledger_memo
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
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.memo_binding_state IS OLD.memo_binding_state
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
CREATE TRIGGER ledger_memo_no_delete BEFORE DELETE ON ledger_memo
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

CREATE TRIGGER ledger_probe_fill_only BEFORE UPDATE ON ledger_probe
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
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.direct_grade IS OLD.direct_grade
		AND NEW.facilitator_grade IS OLD.facilitator_grade
		AND NEW.exposures_count IS OLD.exposures_count
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;
CREATE TRIGGER ledger_probe_no_delete BEFORE DELETE ON ledger_probe
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

-- Refunds and cached rates are append-only too.
CREATE TRIGGER refunds_no_update BEFORE UPDATE ON refunds
BEGIN
	SELECT RAISE(ABORT, 'refunds are append-only');
END;
CREATE TRIGGER refunds_no_delete BEFORE DELETE ON refunds
BEGIN
	SELECT RAISE(ABORT, 'refunds are append-only');
END;
CREATE TRIGGER cad_rates_no_update BEFORE UPDATE ON cad_rates
BEGIN
	SELECT RAISE(ABORT, 'cad rates are append-only');
END;
CREATE TRIGGER cad_rates_no_delete BEFORE DELETE ON cad_rates
BEGIN
	SELECT RAISE(ABORT, 'cad rates are append-only');
END;
