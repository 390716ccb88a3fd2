package sqlcore

import (
	"fmt"
	"strings"

	"github.com/exchangerebel/payability/internal/store"
)

// The free tier: one row per key, rewritten in place by one conditional
// upsert. day is the UTC day number (Unix milliseconds / 86,400,000), so the
// day arithmetic is integer division on both databases. $2 is the caller's
// clock in Unix milliseconds, or NULL to use the database's clock (%[1]s).
// A refused call matches the DO UPDATE's WHERE on no row, so it writes
// nothing and RETURNING returns no row.
const freeUpsertSQL = `
INSERT INTO free_use (caller_key, day_num, used, last_ms)
SELECT CAST($1 AS TEXT), c.now_ms / 86400000, 1, c.now_ms
FROM (SELECT COALESCE(CAST($2 AS BIGINT), %[1]s) AS now_ms) AS c
WHERE true
ON CONFLICT (caller_key) DO UPDATE SET
	used = CASE WHEN free_use.day_num = excluded.day_num THEN free_use.used + 1 ELSE 1 END,
	day_num = excluded.day_num,
	last_ms = excluded.last_ms
WHERE (free_use.day_num <> excluded.day_num OR free_use.used < $3)
	AND free_use.last_ms + $4 <= excluded.last_ms
RETURNING used, last_ms`

// freeStateSQL reads a key's row after a refusal, to say which limit refused
// it. It informs the answer only; the decision was the upsert's.
const freeStateSQL = `
SELECT day_num, used, last_ms, COALESCE(CAST($2 AS BIGINT), %[1]s)
FROM free_use WHERE caller_key = $1`

// The payments seen-set. tx and memo_digest are each UNIQUE, so inserting a
// payment whose tx or memo was seen before inserts nothing.
const insertPaymentSQL = `
INSERT INTO payments (id, rail, tx, memo_digest, op, payer, amount_usdc_units, fee_lamports,
	verified_ms, lease_token, lease_until_ms, resumes_used, delivered_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, NULL)
ON CONFLICT DO NOTHING`

const findPaymentsSQL = `
SELECT id, rail, tx, memo_digest, op, verified_ms, lease_until_ms, resumes_used, delivered_ms
FROM payments WHERE tx = $1 OR memo_digest = $2`

// resumeSQL takes a free lease for the one resume, compare-and-set: of any
// number of concurrent resumes, one matches the WHERE.
// $1 id, $2 new token, $3 new lease end, $4 now, $5 resume window (ms).
const resumeSQL = `
UPDATE payments SET lease_token = $2, lease_until_ms = $3, resumes_used = resumes_used + 1
WHERE id = $1 AND delivered_ms IS NULL AND resumes_used = 0
	AND lease_until_ms <= $4 AND verified_ms + $5 > $4`

// deliverSQL marks a payment delivered, compare-and-set on the lease token.
// $1 id, $2 token, $3 delivery time (ms), $4 tx, $5 op.
const deliverSQL = `
UPDATE payments SET delivered_ms = $3, lease_token = NULL, lease_until_ms = 0
WHERE id = $1 AND lease_token = $2 AND delivered_ms IS NULL AND tx = $4 AND op = $5`

const paymentStateSQL = `SELECT lease_token, delivered_ms FROM payments WHERE id = $1`

// releaseSQL frees a lease, compare-and-set on the lease token.
const releaseSQL = `
UPDATE payments SET lease_token = NULL, lease_until_ms = 0
WHERE id = $1 AND lease_token = $2 AND delivered_ms IS NULL`

// The ledger: one table per op. Its columns are exactly the op's closed field
// list (plus the id key); storetest compares the live schema with the
// criteria. "timestamp" and "day" are quoted: both are keywords somewhere.
var (
	commonColumns = []string{
		"id", "payer_wallet", `"timestamp"`, `"day"`, "price_usdc_units",
		"cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund",
		"payment_tx", "solana_fee_lamports", "criteria_version", "verdict_line",
	}
	opColumns = map[store.Op][]string{
		store.OpCheck: {"payability_state", "description_overlong"},
		store.OpMemo:  {"memo_binding_state"},
		store.OpProbe: {"direct_grade", "facilitator_grade", "exposures_count"},
	}
	lastColumns = []string{"house"}
)

// LedgerTable returns the name of op's ledger table.
func LedgerTable(op store.Op) string {
	return "ledger_" + string(op)
}

type ledgerSQL struct {
	insert, selectRange string
}

var ledgerQueries = func() map[store.Op]ledgerSQL {
	m := make(map[store.Op]ledgerSQL, len(store.Ops))
	for _, op := range store.Ops {
		cols := append(append(append([]string{}, commonColumns...), opColumns[op]...), lastColumns...)
		marks := make([]string, len(cols))
		for i := range cols {
			marks[i] = fmt.Sprintf("$%d", i+1)
		}
		list := strings.Join(cols, ", ")
		m[op] = ledgerSQL{
			insert: fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)",
				LedgerTable(op), list, strings.Join(marks, ", ")),
			selectRange: fmt.Sprintf(`SELECT %s FROM %s WHERE "timestamp" >= $1 AND "timestamp" < $2 ORDER BY "timestamp", id`,
				list, LedgerTable(op)),
		}
	}
	return m
}()
