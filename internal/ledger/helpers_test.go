package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/mr-tron/base58"
	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payability.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// signature returns a fresh, well-formed transaction signature.
func signature() string {
	b := make([]byte, 64)
	rand.Read(b)
	return base58.Encode(b)
}

type delivery struct {
	op    store.Op
	at    time.Time
	house bool
	price uint64
	tx    string
	payer string
}

// deliver claims and delivers one paid call the way the server does: a
// pending CAD block with the fixed basis, the op's closed fields.
func deliver(t *testing.T, st store.Store, d delivery) store.Entry {
	t.Helper()
	ctx := context.Background()
	if d.price == 0 {
		d.price = 10000
	}
	if d.tx == "" {
		d.tx = signature()
	}
	if d.payer == "" {
		d.payer = "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV"
	}
	sum := sha256.Sum256([]byte(d.tx))
	c := store.Claim{Rail: "direct", Tx: d.tx, MemoDigest: hex.EncodeToString(sum[:]), Op: d.op, Payer: d.payer,
		Amount: d.price, FeeLamports: 5000, Now: d.at, LeaseFor: time.Minute, ResumeWindow: 15 * time.Minute}
	r, err := st.Claim(ctx, c)
	if err != nil || r.Outcome != store.Claimed {
		t.Fatalf("Claim: %v %+v", err, r)
	}
	e := store.Entry{
		PayerWallet: d.payer, Timestamp: d.at, PriceUSDCUnits: d.price,
		CAD:       store.CAD{Basis: Basis, Pending: true},
		PaymentTx: d.tx, PaymentNetwork: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", SolanaFeeLamports: 5000, CriteriaVersion: "payability-verdict@r1", House: d.house,
	}
	ts := d.at.UTC().Format("2006-01-02T15:04:05Z")
	switch d.op {
	case store.OpCheck:
		e.VerdictLine = "CHALLENGE PAYABILITY VERDICT — state: POPULATED — " + ts
		e.Check = &store.CheckFields{PayabilityState: "POPULATED"}
	case store.OpMemo:
		e.VerdictLine = "MEMO BINDING VERDICT — state: BOUND — " + ts
		e.Memo = &store.MemoFields{MemoBindingState: "BOUND"}
	case store.OpProbe:
		e.CriteriaVersion = "rail-probe@r1"
		e.VerdictLine = "RAIL PROBE VERDICT — direct: PRESENT-FAIL-CLOSED · facilitator: ABSENT — " + ts
		e.Probe = &store.ProbeFields{DirectGrade: "PRESENT-FAIL-CLOSED", FacilitatorGrade: "ABSENT", ExposuresCount: 1}
	}
	if err := st.Deliver(ctx, r.PaymentID, r.LeaseToken, e); err != nil {
		t.Fatal(err)
	}
	e.ID = r.PaymentID
	return e
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
