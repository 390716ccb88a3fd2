-- Payment on Base beside Solana (issue 25): each ledger entry names the
-- network (CAIP-2) its payment transaction is on, the qualifier of the
-- criteria's "payment tx id" (a Solana signature or an EVM transaction
-- hash). Entries delivered before this migration were all on the Solana
-- cluster the deployment ran on and keep NULL: the column is not
-- back-filled with a guess. The append-only triggers list every column, so
-- they are made again with the new one: the one update an entry ever sees
-- (its CAD fill) leaves the network as it was.
ALTER TABLE ledger_check ADD COLUMN payment_network TEXT;
ALTER TABLE ledger_memo ADD COLUMN payment_network TEXT;
ALTER TABLE ledger_probe ADD COLUMN payment_network TEXT;

DROP TRIGGER IF EXISTS ledger_check_fill_only;
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
		AND NEW.payment_network IS OLD.payment_network
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.payability_state IS OLD.payability_state
		AND NEW.description_overlong IS OLD.description_overlong
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

DROP TRIGGER IF EXISTS ledger_memo_fill_only;
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
		AND NEW.payment_network IS OLD.payment_network
		AND NEW.solana_fee_lamports IS OLD.solana_fee_lamports
		AND NEW.criteria_version IS OLD.criteria_version
		AND NEW.verdict_line IS OLD.verdict_line
		AND NEW.memo_binding_state IS OLD.memo_binding_state
		AND NEW.house IS OLD.house)
BEGIN
	SELECT RAISE(ABORT, 'ledger entries are append-only');
END;

DROP TRIGGER IF EXISTS ledger_probe_fill_only;
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
		AND NEW.payment_network IS OLD.payment_network
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
