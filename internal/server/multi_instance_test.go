package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// The proofs of the scale-out issue: two `serve` instances on loopback, each
// with its own PostgreSQL store opened on the same database (a schema of the
// test's own), behave for a buyer exactly as one instance does. Every
// guarantee below is the database's: the instances share no memory.

const precheckPath = "/toll/payability/precheck"

// presentation is the answer one instance gave one presentation.
type presentation struct {
	node string
	res  response
	err  error
}

// onBoth runs fn perNode times on each node, all at once, and collects the
// answers.
func onBoth(nodes []*node, perNode int, fn func(n *node) (response, error)) []presentation {
	start := make(chan struct{})
	out := make(chan presentation, len(nodes)*perNode)
	var wg sync.WaitGroup
	for _, n := range nodes {
		for range perNode {
			wg.Go(func() {
				<-start
				res, err := fn(n)
				out <- presentation{n.name, res, err}
			})
		}
	}
	close(start)
	wg.Wait()
	close(out)
	var all []presentation
	for p := range out {
		all = append(all, p)
	}
	return all
}

func TestOnePaymentPresentedToTwoInstancesPaysOnce(t *testing.T) {
	for _, rt := range []struct {
		path, table string
		op          store.Op
	}{{"/toll/payability/check", "ledger_check", store.OpCheck}, {"/toll/x402/lint", "ledger_lint", store.OpLint}} {
		t.Run(rt.path, func(t *testing.T) {
			c := newCluster(t)
			a, b := c.start("A", nodeOptions{}), c.start("B", nodeOptions{})
			path := rt.path
			memo := a.mustMemo(t, path, c.seller)
			sig := c.chain.pay(memo)

			answers := onBoth([]*node{a, b}, 25, func(n *node) (response, error) {
				return n.present(path, c.seller, sig, memo)
			})
			var delivered []presentation
			for _, p := range answers {
				switch {
				case p.err != nil:
					t.Errorf("%s: %v", p.node, p.err)
				case p.res.status == http.StatusOK:
					delivered = append(delivered, p)
				case p.res.status == http.StatusConflict && errorCode(p.res.body) == string(gate.CodePaymentInProgress),
					p.res.status == http.StatusPaymentRequired && errorCode(p.res.body) == string(gate.CodePaymentAlreadyUsed):
				default:
					t.Errorf("%s: %d %s; want 200, 409 payment_in_progress or 402 payment_already_used", p.node, p.res.status, p.res.body)
				}
			}
			if len(delivered) != 1 {
				t.Fatalf("%d reports delivered from 50 presentations on two instances, want exactly 1", len(delivered))
			}
			t.Logf("the report came from instance %s", delivered[0].node)
			if _, err := report.Verify(delivered[0].res.body, a.keys); err != nil {
				t.Errorf("the report does not verify under the shared key set: %v", err)
			}

			day := c.clock.Now()
			for _, n := range []*node{a, b} {
				entries, err := n.store.Entries(context.Background(), rt.op, day.Add(-time.Hour), day.Add(time.Hour))
				if err != nil || len(entries) != 1 || entries[0].PaymentTx != sig {
					t.Errorf("the ledger as instance %s reads it: %d entries (%v), want the one entry of the payment", n.name, len(entries), err)
				}
				if res := n.mustPresent(t, path, c.seller, sig, memo); res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodePaymentAlreadyUsed) {
					t.Errorf("afterwards on %s: %d %s, want 402 payment_already_used", n.name, res.status, res.body)
				}
			}
			if got := c.count(`SELECT count(*) FROM payments`); got != 1 {
				t.Errorf("%d payment rows, want 1", got)
			}
			if got := c.count(`SELECT count(*) FROM ` + rt.table); got != 1 {
				t.Errorf("%d ledger rows, want 1", got)
			}
		})
	}
}

// freeCall is one free pre-check of wallet on n.
func freeCall(n *node, wallet string) (response, error) {
	return n.do(http.MethodPost, precheckPath, `{"url":"https://seller.example/api","caller":"`+testWallet(wallet)+`"}`, nil)
}

func TestFreeTierIsSharedAcrossInstances(t *testing.T) {
	// The production set-up reads the database's clock; the injected-clock
	// set-up is the one the daily-limit proof needs. The burst holds on both.
	for _, tc := range []struct {
		name string
		opts nodeOptions
	}{
		{"database clock", nodeOptions{UseDBClock: true, Now: time.Now}},
		{"injected clock", nodeOptions{}},
	} {
		t.Run("40 concurrent calls from one wallet allow one, "+tc.name, func(t *testing.T) {
			c := newCluster(t)
			a, b := c.start("A", tc.opts), c.start("B", tc.opts)
			answers := onBoth([]*node{a, b}, 20, func(n *node) (response, error) { return freeCall(n, "wallet-burst") })
			allowed := 0
			for _, p := range answers {
				switch {
				case p.err != nil:
					t.Errorf("%s: %v", p.node, p.err)
				case p.res.status == http.StatusOK:
					allowed++
				case p.res.status == http.StatusPaymentRequired && errorCode(p.res.body) == string(gate.CodeFreeMinInterval):
				default:
					t.Errorf("%s: %d %s; want 200 or 402 free_min_interval", p.node, p.res.status, p.res.body)
				}
			}
			if allowed != 1 {
				t.Errorf("%d of 40 concurrent free calls allowed across two instances, want exactly 1", allowed)
			}
		})
	}

	t.Run("100 spaced calls on alternate instances, the 101st refused on either", func(t *testing.T) {
		c := newCluster(t)
		a, b := c.start("A", nodeOptions{}), c.start("B", nodeOptions{})
		nodes := []*node{a, b}
		for i := range 100 {
			n := nodes[i%2]
			res := n.mustDo(t, http.MethodPost, precheckPath, `{"url":"https://seller.example/api","caller":"`+testWallet("wallet-day")+`"}`, nil)
			if res.status != http.StatusOK {
				t.Fatalf("call %d on %s: %d %s", i+1, n.name, res.status, res.body)
			}
			// The count is the shared one: each instance sees the other's calls.
			if got, want := res.header.Get("X-Free-Calls-Remaining"), strconv.Itoa(99-i); got != want {
				t.Fatalf("call %d on %s: %s calls remaining, want %s", i+1, n.name, got, want)
			}
			c.clock.Add(5 * time.Second)
		}
		for _, n := range nodes {
			res := n.mustDo(t, http.MethodPost, precheckPath, `{"url":"https://seller.example/api","caller":"`+testWallet("wallet-day")+`"}`, nil)
			if res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodeFreeDailyLimit) {
				t.Errorf("101st call on %s: %d %s, want 402 free_daily_limit", n.name, res.status, res.body)
			}
		}
		// The next UTC day opens a new allowance, on either instance.
		c.clock.Add(24 * time.Hour)
		if res := b.mustDo(t, http.MethodPost, precheckPath, `{"url":"https://seller.example/api","caller":"`+testWallet("wallet-day")+`"}`, nil); res.status != http.StatusOK {
			t.Errorf("the next day on B: %d %s", res.status, res.body)
		}
	})

	t.Run("with the database clock, instance clocks do not matter", func(t *testing.T) {
		// Two instances whose clocks are 98 years apart (different UTC days,
		// far past the 5 s interval): by their own clocks the second call
		// would be allowed. The database's clock refuses it.
		past := func() time.Time { return time.Date(2001, 1, 1, 12, 0, 0, 0, time.UTC) }
		future := func() time.Time { return time.Date(2099, 6, 1, 12, 0, 0, 0, time.UTC) }
		for _, tc := range []struct {
			dbClock     bool
			secondAllow bool
		}{
			{dbClock: true, secondAllow: false},
			// The control: the same calls judged by the instances' clocks.
			{dbClock: false, secondAllow: true},
		} {
			c := newCluster(t)
			a := c.start("A", nodeOptions{UseDBClock: tc.dbClock, Now: past})
			b := c.start("B", nodeOptions{UseDBClock: tc.dbClock, Now: future})
			if res := a.mustDo(t, http.MethodPost, precheckPath, `{"url":"https://seller.example/api","caller":"`+testWallet("wallet-clock")+`"}`, nil); res.status != http.StatusOK {
				t.Fatalf("UseDBClock %v: first call on A: %d %s", tc.dbClock, res.status, res.body)
			}
			res := b.mustDo(t, http.MethodPost, precheckPath, `{"url":"https://seller.example/api","caller":"`+testWallet("wallet-clock")+`"}`, nil)
			if got := res.status == http.StatusOK; got != tc.secondAllow {
				t.Errorf("UseDBClock %v: the call on B at once: %d %s; allowed %v, want %v", tc.dbClock, res.status, res.body, got, tc.secondAllow)
			}
			if !tc.secondAllow {
				ra, err := strconv.Atoi(res.header.Get("Retry-After"))
				if errorCode(res.body) != string(gate.CodeFreeMinInterval) || err != nil || ra < 1 || ra > 5 {
					t.Errorf("UseDBClock %v: refusal %s, Retry-After %q; want free_min_interval within 5 s", tc.dbClock, res.body, res.header.Get("Retry-After"))
				}
			}
		}
	})
}

func TestInstanceKilledAfterVerificationResumesOnAnother(t *testing.T) {
	const path = "/toll/payability/check"

	// resumeOn proves the other instance's side: the payer is told to wait
	// while the dead instance's lease runs, then resumes exactly once.
	resumeOn := func(t *testing.T, c *cluster, b *node, sig, memo, targetURL string) {
		t.Helper()
		res := b.mustPresent(t, path, targetURL, sig, memo)
		if res.status != http.StatusConflict || res.header.Get("Retry-After") == "" || errorCode(res.body) != string(gate.CodePaymentInProgress) {
			t.Fatalf("on B during the lease: %d %s, want 409 payment_in_progress with Retry-After", res.status, res.body)
		}
		c.clock.Add(91 * time.Second)
		res = b.mustPresent(t, path, targetURL, sig, memo)
		if res.status != http.StatusOK {
			t.Fatalf("resume on B: %d %s", res.status, res.body)
		}
		var rep struct {
			Payment PaymentRef `json:"payment"`
		}
		if json.Unmarshal(res.body, &rep); !rep.Payment.Resumed || rep.Payment.Tx != sig {
			t.Errorf("the resumed report names payment %+v, want tx %s resumed", rep.Payment, sig)
		}
		if _, err := report.Verify(res.body, b.keys); err != nil {
			t.Errorf("the resumed report does not verify: %v", err)
		}
		if res := b.mustPresent(t, path, targetURL, sig, memo); res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodePaymentAlreadyUsed) {
			t.Errorf("a second resume: %d %s, want 402 payment_already_used", res.status, res.body)
		}
		if got := c.count(`SELECT count(*) FROM ledger_check WHERE payment_tx = $1`, sig); got != 1 {
			t.Errorf("%d ledger entries, want 1", got)
		}
		if got := c.count(`SELECT count(*) FROM payments WHERE tx = $1 AND resumes_used = 1 AND delivered_ms IS NOT NULL`, sig); got != 1 {
			t.Errorf("the payment is not recorded as delivered on its one resume")
		}
	}

	t.Run("claimed, then the process dies", func(t *testing.T) {
		c := newCluster(t)
		a, b := c.start("A", nodeOptions{}), c.start("B", nodeOptions{})
		memo := a.mustMemo(t, path, c.seller)
		sig := c.chain.pay(memo)
		hdr := http.Header{}
		hdr.Set(gate.HeaderPaymentTx, sig)
		hdr.Set(gate.HeaderPaymentMemo, memo)
		d, err := a.gate.Admit(context.Background(), gate.Request{Op: ops.OpCheck, Resource: a.url + path, TargetURL: c.seller, Header: hdr})
		if err != nil || d.Kind != gate.Paid {
			t.Fatalf("admit on A: %v %+v", err, d)
		}
		// A dies here: the claim holds a lease nobody will deliver or release.
		a.srv.Close()
		a.store.Close()
		resumeOn(t, c, b, sig, memo, c.seller)
	})

	t.Run("stopped in the middle of the op", func(t *testing.T) {
		c := newCluster(t)
		a, b := c.start("A", nodeOptions{}), c.start("B", nodeOptions{})
		// A seller whose first answer stalls until A has lost its database,
		// as a process does when it is killed mid-op.
		reached, resume := make(chan struct{}), make(chan struct{})
		var first atomic.Bool
		seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if first.CompareAndSwap(false, true) {
				close(reached)
				<-resume
			}
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"1000"}]}`))
		}))
		defer seller.Close()
		memo := a.mustMemo(t, path, seller.URL)
		sig := c.chain.pay(memo)
		done := make(chan response, 1)
		go func() {
			res, _ := a.present(path, seller.URL, sig, memo)
			done <- res
		}()
		select {
		case <-reached:
		case <-time.After(30 * time.Second):
			t.Fatal("A never ran the op")
		}
		// The payment is verified and claimed, the op is running: A loses
		// its store for good, so it can neither deliver nor release.
		a.store.Close()
		close(resume)
		if res := <-done; res.status == http.StatusOK {
			t.Fatalf("A delivered without its store: %s", res.body)
		}
		resumeOn(t, c, b, sig, memo, seller.URL)
	})
}

func TestInstancesMustShareTheirKeys(t *testing.T) {
	const path = "/toll/payability/memo"

	t.Run("a challenge issued by one instance is paid on another sharing the memo key", func(t *testing.T) {
		c := newCluster(t)
		a, b := c.start("A", nodeOptions{}), c.start("B", nodeOptions{})
		memo := a.mustMemo(t, path, c.seller)
		sig := c.chain.pay(memo)
		res := b.mustPresent(t, path, c.seller, sig, memo)
		if res.status != http.StatusOK {
			t.Fatalf("on B: %d %s", res.status, res.body)
		}
		// The buyer may verify it against the key set served by any instance.
		jwks := a.mustDo(t, http.MethodGet, "/.well-known/jwks.json", "", nil)
		keys, err := report.ParseJWKS(jwks.body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := report.Verify(res.body, keys); err != nil {
			t.Errorf("B's report does not verify under A's JWKS: %v", err)
		}
		if other := b.mustDo(t, http.MethodGet, "/.well-known/jwks.json", "", nil); string(other.body) != string(jwks.body) {
			t.Errorf("A and B serve different key sets")
		}
	})

	t.Run("an instance with another memo key fails closed, with a reason, and consumes nothing", func(t *testing.T) {
		c := newCluster(t)
		a, stray := c.start("A", nodeOptions{}), c.start("C", nodeOptions{MemoKey: randomKey(t)})
		memo := a.mustMemo(t, path, c.seller)
		sig := c.chain.pay(memo)
		res := stray.mustPresent(t, path, c.seller, sig, memo)
		if res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodeMemoInvalid) {
			t.Fatalf("on C: %d %s, want 402 memo_invalid", res.status, res.body)
		}
		var refusal struct {
			Detail  string `json:"detail"`
			Memo    string `json:"memo"`
			Accepts []any  `json:"accepts"`
		}
		json.Unmarshal(res.body, &refusal)
		if refusal.Detail == "" || len(refusal.Accepts) != 1 || refusal.Memo == "" || refusal.Memo == memo || res.header.Get("PAYMENT-REQUIRED") == "" {
			t.Errorf("the refusal is not a reasoned 402 with a fresh challenge of its own: %s", res.body)
		}
		if got := c.count(`SELECT count(*) FROM payments WHERE tx = $1`, sig); got != 0 {
			t.Errorf("the refused payment was recorded (%d rows)", got)
		}
		// The payment is intact: an instance with the fleet's key takes it.
		if res := a.mustPresent(t, path, c.seller, sig, memo); res.status != http.StatusOK {
			t.Errorf("the same payment on A afterwards: %d %s", res.status, res.body)
		}
	})

	t.Run("an instance with another signing key signs reports the fleet's JWKS refuses", func(t *testing.T) {
		other, err := report.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		c := newCluster(t)
		a, stray := c.start("A", nodeOptions{}), c.start("D", nodeOptions{Key: &other})
		memo := a.mustMemo(t, path, c.seller)
		sig := c.chain.pay(memo)
		res := stray.mustPresent(t, path, c.seller, sig, memo)
		if res.status != http.StatusOK {
			t.Fatalf("on D: %d %s", res.status, res.body)
		}
		if kid, err := report.Verify(res.body, a.keys); err == nil {
			t.Errorf("D's report verified under the fleet's key set (kid %s)", kid)
		}
		if !strings.Contains(string(res.body), other.Kid) {
			t.Errorf("D's report does not name D's key")
		}
	})
}
