package sqlcore

import (
	"fmt"
	"strings"
	"sync"

	"github.com/exchangerebel/payability/internal/store"
)

// The free tier: one row per key, rewritten in place by one conditional
// upsert. day is the UTC day number (Unix milliseconds / 86,400,000), so the
// day arithmetic is integer division on both databases. $2 is the caller's
// clock in Unix milliseconds, or NULL to use the database's clock (%[1]s).
// A refused call matches the DO UPDATE's WHERE on no row, so it writes
// nothing and RETURNING returns no row. The same statement serves the
// per-key table (free_use, caller_key) and the per-source ceiling
// (free_source, source_key): %[2]s is the table, %[3]s its key column.
const freeUpsertSQL = `
INSERT INTO %[2]s (%[3]s, day_num, used, last_ms)
SELECT CAST($1 AS TEXT), c.now_ms / 86400000, 1, c.now_ms
FROM (SELECT COALESCE(CAST($2 AS BIGINT), %[1]s) AS now_ms) AS c
WHERE true
ON CONFLICT (%[3]s) DO UPDATE SET
	used = CASE WHEN %[2]s.day_num = excluded.day_num THEN %[2]s.used + 1 ELSE 1 END,
	day_num = excluded.day_num,
	last_ms = excluded.last_ms
WHERE (%[2]s.day_num <> excluded.day_num OR %[2]s.used < $3)
	AND %[2]s.last_ms + $4 <= excluded.last_ms
RETURNING used, last_ms`

// freeStateSQL reads a key's row after a refusal, to say which limit refused
// it. It informs the answer only; the decision was the upsert's.
const freeStateSQL = `
SELECT day_num, used, last_ms, COALESCE(CAST($2 AS BIGINT), %[1]s)
FROM %[2]s WHERE %[3]s = $1`

// The prune job's statements ($1: the cut-off in Unix milliseconds; $2 now).
const (
	pruneFreeSQL        = `DELETE FROM free_use WHERE last_ms < $1`
	pruneFreeSourceSQL  = `DELETE FROM free_source WHERE last_ms < $1`
	pruneSettlementsSQL = `DELETE FROM settlements WHERE created_ms < $1 AND lease_until_ms <= $2`
	clockSQL            = `SELECT %[1]s`
	sizesSQL            = `SELECT (SELECT COUNT(*) FROM free_use), (SELECT COUNT(*) FROM free_source),
	(SELECT COUNT(*) FROM settlements), (SELECT COUNT(*) FROM payments)`
)

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
// The token stays on the row, so the delivery can be reopened (reopenSQL)
// by the one who made it.
// $1 id, $2 token, $3 delivery time (ms), $4 tx, $5 op.
const deliverSQL = `
UPDATE payments SET delivered_ms = $3, lease_until_ms = 0
WHERE id = $1 AND lease_token = $2 AND delivered_ms IS NULL AND tx = $4 AND op = $5`

// reopenSQL takes back a delivery whose report could not be written,
// compare-and-set on the delivery's token, while the one resume is unused.
const reopenSQL = `
UPDATE payments SET delivered_ms = NULL, lease_token = NULL, lease_until_ms = 0
WHERE id = $1 AND lease_token = $2 AND delivered_ms IS NOT NULL AND resumes_used = 0`

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
		"payment_tx", "payment_network", "solana_fee_lamports", "criteria_version", "verdict_line",
	}
	opColumns = map[store.Op][]string{
		store.OpCheck: {"payability_state", "description_overlong"},
		store.OpMemo:  {"memo_binding_state"},
		store.OpProbe: {"direct_grade", "facilitator_grade", "exposures_count"},
		// x402-preflight's ops: closed fields of our own (docs/ledger.md).
		store.OpPreflight: {"decision", "reasons"},
		store.OpLint:      {"conforms", "errors_count", "warnings_count"},
	}
	lastColumns = []string{"house"}
)

// LedgerTable returns the name of op's ledger table.
func LedgerTable(op store.Op) string {
	return "ledger_" + string(op)
}

type ledgerSQL struct {
	insert, selectRange string
	// The ledger issue's accounting queries.
	selectPending, fillCAD, insertRefund, entryExists, entryOfPayment, salesByDay, firstSale, refundsByDay string
}

// ledgerQueries are built on first use, not at start-up.
var ledgerQueries = sync.OnceValue(func() map[store.Op]ledgerSQL {
	m := make(map[store.Op]ledgerSQL, len(store.Ops))
	for _, op := range store.Ops {
		cols := append(append(append([]string{}, commonColumns...), opColumns[op]...), lastColumns...)
		marks := make([]string, len(cols))
		// A read joins the entry's refund record in: the stored refund
		// column stays NULL (entries are never rewritten), so the entry's
		// refund field is the id of the refund recorded against it.
		read := make([]string, len(cols))
		for i, c := range cols {
			marks[i] = fmt.Sprintf("$%d", i+1)
			read[i] = "l." + c
			if c == "refund" {
				read[i] = "COALESCE(l.refund, r.id)"
			}
		}
		list := strings.Join(cols, ", ")
		table := LedgerTable(op)
		from := fmt.Sprintf("%s AS l LEFT JOIN refunds AS r ON r.entry_op = '%s' AND r.entry_id = l.id", table, op)
		selectList := strings.Join(read, ", ")
		m[op] = ledgerSQL{
			insert: fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)",
				table, list, strings.Join(marks, ", ")),
			selectRange: fmt.Sprintf(`SELECT %s FROM %s WHERE l."timestamp" >= $1 AND l."timestamp" < $2 ORDER BY l."timestamp", l.id`,
				selectList, from),
			selectPending: fmt.Sprintf(`SELECT %s FROM %s WHERE l.cad_pending = $1 ORDER BY l."timestamp", l.id`,
				selectList, from),
			// Compare-and-set on cad_pending: a filled entry matches no row.
			// $1 id, $2 rate, $3 rate date, $4 false, $5 true.
			fillCAD: fmt.Sprintf(`UPDATE %s SET cad_rate = $2, cad_rate_date = $3, cad_pending = $4
WHERE id = $1 AND cad_pending = $5 AND cad_rate IS NULL AND cad_rate_date IS NULL`, table),
			// The refund is inserted only when its entry exists, and once
			// per entry (UNIQUE (entry_op, entry_id)).
			// $1 id, $2 op, $3 entry id, $4 tx, $5 timestamp, $6 day.
			insertRefund: fmt.Sprintf(`INSERT INTO refunds (id, entry_op, entry_id, refund_tx, "timestamp", "day")
SELECT $1, $2, id, $4, $5, $6 FROM %s WHERE id = $3
ON CONFLICT DO NOTHING`, table),
			entryExists: fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE id = $1`, table),
			// The entry of a reopened delivery is kept: the resumed one
			// writes none. $1 id, $2 tx.
			entryOfPayment: fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE id = $1 AND payment_tx = $2`, table),
			// $1 false: outside entries only; house entries are no sales.
			salesByDay: fmt.Sprintf(`SELECT "day", COUNT(*) FROM %s WHERE house = $1 GROUP BY "day" ORDER BY "day"`, table),
			firstSale:  fmt.Sprintf(`SELECT MIN("timestamp") FROM %s WHERE house = $1`, table),
			refundsByDay: fmt.Sprintf(`SELECT r."day", COUNT(*) FROM refunds AS r JOIN %s AS l ON l.id = r.entry_id
WHERE r.entry_op = '%s' AND l.house = $1 GROUP BY r."day" ORDER BY r."day"`, table, op),
		}
	}
	return m
})

// The cached rates: insert-or-ignore, so a cached date keeps its first value.
const (
	insertRateSQL = `INSERT INTO cad_rates (rate_date, cad_per_usd, fetched_at) VALUES ($1, $2, $3)
ON CONFLICT (rate_date) DO NOTHING`
	selectRatesSQL = `SELECT rate_date, cad_per_usd FROM cad_rates WHERE rate_date >= $1 AND rate_date <= $2 ORDER BY rate_date`
)

const (
	selectRefundsSQL = `SELECT id, entry_op, entry_id, refund_tx, "timestamp" FROM refunds
WHERE "timestamp" >= $1 AND "timestamp" < $2 ORDER BY "timestamp", id`
	refundOfEntrySQL = `SELECT COUNT(*) FROM refunds WHERE entry_op = $1 AND entry_id = $2`
	freeByDaySQL     = `SELECT scope, day_num, allowed FROM free_use_daily WHERE allowed > 0 ORDER BY scope, day_num`
)
