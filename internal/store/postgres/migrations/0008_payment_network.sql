-- Payment on Base beside Solana (issue 25): each ledger entry names the
-- network (CAIP-2) its payment transaction is on, the qualifier of the
-- criteria's "payment tx id" (a Solana signature or an EVM transaction
-- hash). Entries delivered before this migration were all on the Solana
-- cluster the deployment ran on and keep NULL: the column is not
-- back-filled with a guess. ledger_fill_only compares every column of the
-- row (to_jsonb), so the new one is covered by the append-only rule as is.
ALTER TABLE ledger_check ADD COLUMN payment_network TEXT;
ALTER TABLE ledger_memo ADD COLUMN payment_network TEXT;
ALTER TABLE ledger_probe ADD COLUMN payment_network TEXT;
