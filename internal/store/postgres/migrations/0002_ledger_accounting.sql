-- The ledger issue: the cached daily rates of the CAD valuation, refunds as
-- records of their own, the daily free-use tally the tripwires read, and the
-- ledger's append-only rule as triggers, so it holds whatever writes.

-- Published daily rates (CAD per USD), cached as first fetched: a date keeps
-- its first value.
CREATE TABLE cad_rates (
	rate_date   TEXT PRIMARY KEY,
	cad_per_usd TEXT NOT NULL,
	fetched_at  TEXT NOT NULL
);

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
);
CREATE INDEX refunds_timestamp ON refunds ("timestamp");

-- Allowed free calls per scope (the service: the part of the free-tier key
-- before its first '|') and UTC day number. free_use keeps one row per key
-- for the current day only, so the history the tripwires need lives here,
-- counted by a trigger in the very statement that allows the call.
CREATE TABLE free_use_daily (
	scope   TEXT NOT NULL,
	day_num BIGINT NOT NULL,
	allowed BIGINT NOT NULL,
	PRIMARY KEY (scope, day_num)
);

-- The calls allowed before this migration: each key's count of its last day.
INSERT INTO free_use_daily (scope, day_num, allowed)
SELECT CASE WHEN strpos(free_use.caller_key, '|') > 0 THEN split_part(free_use.caller_key, '|', 1) ELSE '' END, day_num, SUM(used) FROM free_use GROUP BY 1, 2;

CREATE FUNCTION free_use_daily_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO free_use_daily (scope, day_num, allowed)
	VALUES (CASE WHEN strpos(NEW.caller_key, '|') > 0 THEN split_part(NEW.caller_key, '|', 1) ELSE '' END, NEW.day_num, 1)
	ON CONFLICT (scope, day_num) DO UPDATE SET allowed = free_use_daily.allowed + 1;
	RETURN NULL;
END
$$;
CREATE TRIGGER free_use_daily_count AFTER INSERT OR UPDATE ON free_use
	FOR EACH ROW EXECUTE FUNCTION free_use_daily_count();

-- Ledger entries are never deleted, and never edited but for one step: a
-- pending entry gets its rate and rate date once (cad_pending true -> false),
-- every other column unchanged.
CREATE FUNCTION ledger_fill_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.cad_pending AND NOT NEW.cad_pending
		AND OLD.cad_rate IS NULL AND OLD.cad_rate_date IS NULL
		AND NEW.cad_rate IS NOT NULL AND NEW.cad_rate_date IS NOT NULL
		AND to_jsonb(NEW) - 'cad_rate' - 'cad_rate_date' - 'cad_pending'
			= to_jsonb(OLD) - 'cad_rate' - 'cad_rate_date' - 'cad_pending' THEN
		RETURN NEW;
	END IF;
	RAISE EXCEPTION 'ledger entries are append-only';
END
$$;
CREATE TRIGGER ledger_check_fill_only BEFORE UPDATE OR DELETE ON ledger_check
	FOR EACH ROW EXECUTE FUNCTION ledger_fill_only();
CREATE TRIGGER ledger_memo_fill_only BEFORE UPDATE OR DELETE ON ledger_memo
	FOR EACH ROW EXECUTE FUNCTION ledger_fill_only();
CREATE TRIGGER ledger_probe_fill_only BEFORE UPDATE OR DELETE ON ledger_probe
	FOR EACH ROW EXECUTE FUNCTION ledger_fill_only();

-- Refunds and cached rates are append-only too.
CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% rows are append-only', TG_TABLE_NAME;
END
$$;
CREATE TRIGGER refunds_append_only BEFORE UPDATE OR DELETE ON refunds
	FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER cad_rates_append_only BEFORE UPDATE OR DELETE ON cad_rates
	FOR EACH ROW EXECUTE FUNCTION append_only();
