package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/store"
)

// A paid report is never stored, so a buyer who hangs up must be able to
// have it once more with the same payment: the delivery is final only when
// the answer left. These tests hang up deterministically: the op's fetch
// blocks until the server's own request context says the buyer is gone.

// hangupSeller is a loopback x402 seller whose first fetch blocks until
// release is closed; every later fetch answers at once.
func hangupSeller(t *testing.T, started chan<- struct{}, release <-chan struct{}) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			close(started)
			<-release
		}
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, `{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"1000"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// payment presents a fresh payment of path for url on the named rail and
// returns its headers.
func (h *harness) payment(rail, path, url string) map[string]string {
	h.t.Helper()
	if rail == railEVM {
		return map[string]string{facilitator.HeaderPaymentSignature: h.payEVMV2(path, url)}
	}
	if rail == gate.RailFacilitator {
		return map[string]string{facilitator.HeaderPaymentSignature: h.payV2(path, url)}
	}
	memo := h.challengeMemo(path, url)
	return map[string]string{gate.HeaderPaymentTx: h.chain.pay(memo), gate.HeaderPaymentMemo: memo}
}

// railEVM names, in these tests, the facilitator rail paid on the EVM
// entry (Base, with the receipt checked on the loopback node).
const railEVM = "facilitator-evm"

func withRail(t *testing.T, rail string) *harness {
	h := newHarness(t, ServeAll)
	switch rail {
	case gate.RailFacilitator:
		withFacilitator(t, h)
	case railEVM:
		fake := withFacilitator(t, h)
		settleOnNode(fake, withEVM(t, h, gate.Base), gate.Base.USDC, 20000)
	}
	return h
}

func (h *harness) paidBody(url string) string { return fmt.Sprintf(`{"url":%q}`, url) }

func assertResumedReport(t *testing.T, res response) {
	t.Helper()
	if res.status != http.StatusOK || !strings.Contains(string(res.body), `"resumed":true`) {
		t.Fatalf("the same payment again: %d %s, want 200 with a resumed report", res.status, res.body)
	}
}

func assertSpent(t *testing.T, res response) {
	t.Helper()
	if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"payment_already_used"`) {
		t.Errorf("the payment a third time: %d %s, want 402 payment_already_used", res.status, res.body)
	}
}

func assertOneEntry(t *testing.T, h *harness, op store.Op) store.Entry {
	t.Helper()
	es := entries(t, h, op)
	if len(es) != 1 {
		t.Fatalf("%s ledger holds %d entries, want 1", op, len(es))
	}
	return es[0]
}

func entries(t *testing.T, h *harness, op store.Op) []store.Entry {
	t.Helper()
	now := h.clock.Now()
	es, err := h.store.Entries(context.Background(), op, now.AddDate(0, 0, -1), now.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestBuyerHangsUpMidOp: the buyer hangs up while the op runs; nothing is
// delivered, and the same payment presented again for the same URL runs
// the op once more at no charge, with one ledger entry; a third
// presentation is spent. Both rails.
func TestBuyerHangsUpMidOp(t *testing.T) {
	for _, rt := range []struct {
		path string
		op   store.Op
	}{{"/toll/payability/check", store.OpCheck}, {"/toll/x402/preflight", store.OpPreflight}} {
		for _, rail := range []string{gate.RailDirect, gate.RailFacilitator, railEVM} {
			t.Run(rail+rt.path, func(t *testing.T) {
				h := withRail(t, rail)
				started, release := make(chan struct{}), make(chan struct{})
				seller := hangupSeller(t, started, release)
				path := rt.path
				pay := h.payment(rail, path, seller.URL)

				// A front that hands the server's request context of the paid
				// call to the seller, and says when the handler is done.
				served := make(chan struct{})
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					go func() {
						<-started
						<-r.Context().Done() // the server saw the buyer go
						close(release)
					}()
					h.s.ServeHTTP(w, r)
					close(served)
				}))
				defer front.Close()

				ctx, hangUp := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, front.URL+path, strings.NewReader(h.paidBody(seller.URL)))
				req.Header.Set("Content-Type", "application/json")
				for k, v := range pay {
					req.Header.Set(k, v)
				}
				errc := make(chan error, 1)
				go func() {
					res, err := http.DefaultClient.Do(req)
					if err == nil {
						res.Body.Close()
					}
					errc <- err
				}()
				<-started
				hangUp()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("the hung-up call: %v, want canceled", err)
				}
				<-served
				if es := entries(t, h, rt.op); len(es) != 0 {
					t.Fatalf("%d ledger entries for a report never written", len(es))
				}
				if !strings.Contains(h.logs.String(), "buyer gone before the answer") {
					t.Errorf("log does not say the buyer was gone:\n%s", h.logs.String())
				}

				assertResumedReport(t, h.do(http.MethodPost, path, h.paidBody(seller.URL), pay))
				assertOneEntry(t, h, rt.op)
				assertSpent(t, h.do(http.MethodPost, path, h.paidBody(seller.URL), pay))
				assertOneEntry(t, h, rt.op)
			})
		}
	}
}

// brokenWriter is a connection that breaks while the answer is written.
type brokenWriter struct{ http.ResponseWriter }

var errBroken = errors.New("connection reset by peer")

func (b brokenWriter) Write([]byte) (int, error) { return 0, errBroken }
func (b brokenWriter) FlushError() error         { return errBroken }

// TestAnswerNotWrittenReopensTheDelivery: the connection breaks during the
// write, after the delivery was recorded: the delivery is reopened, the
// same payment runs the op once more, the ledger keeps its one entry, and
// when the resumed answer cannot be written either, no resume is left.
func TestAnswerNotWrittenReopensTheDelivery(t *testing.T) {
	for _, rt := range []struct {
		path string
		op   store.Op
	}{{"/toll/rail-probe/probe", store.OpProbe}, {"/toll/x402/lint", store.OpLint}} {
		for _, rail := range []string{gate.RailDirect, gate.RailFacilitator, railEVM} {
			t.Run(rail+rt.path, func(t *testing.T) {
				h := withRail(t, rail)
				seller, fetches := countingSeller(t)
				path := rt.path
				pay := h.payment(rail, path, seller.URL)
				var broken atomic.Bool
				broken.Store(true)
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if broken.Load() {
						w = brokenWriter{w}
					}
					h.s.ServeHTTP(w, r)
				}))
				defer front.Close()
				post := func() response {
					req, _ := http.NewRequest(http.MethodPost, front.URL+path, strings.NewReader(h.paidBody(seller.URL)))
					req.Header.Set("Content-Type", "application/json")
					for k, v := range pay {
						req.Header.Set(k, v)
					}
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer res.Body.Close()
					b, _ := io.ReadAll(res.Body)
					return response{res.StatusCode, res.Header, b}
				}
				post()
				first := assertOneEntry(t, h, rt.op)
				before := fetches.Load()
				if !strings.Contains(h.logs.String(), "the delivery is reopened") {
					t.Errorf("log does not say the delivery was reopened:\n%s", h.logs.String())
				}

				broken.Store(false)
				assertResumedReport(t, post())
				if fetches.Load() == before {
					t.Errorf("the resume did not run the op again")
				}
				if got := assertOneEntry(t, h, rt.op); got.ID != first.ID || !got.Timestamp.Equal(first.Timestamp) {
					t.Errorf("entry after the resume %+v, want the first one kept", got)
				}
				assertSpent(t, post())

				// A second payment whose answer and resumed answer both break:
				// one resume, then spent.
				pay = h.payment(rail, path, seller.URL)
				broken.Store(true)
				post()
				post()
				if !strings.Contains(h.logs.String(), "the payment's one resume is used") {
					t.Errorf("log does not say the one resume was used:\n%s", h.logs.String())
				}
				broken.Store(false)
				assertSpent(t, post())
				if es := entries(t, h, rt.op); len(es) != 2 {
					t.Errorf("%d probe entries, want 2 (one per payment)", len(es))
				}
			})
		}
	}
}

// TestAnswerNotWrittenResumesOnAnotherInstance: on PostgreSQL, shared by two
// instances, an answer that broke on A leaves the payment resumable on B,
// once, with one ledger entry; both rails.
func TestAnswerNotWrittenResumesOnAnotherInstance(t *testing.T) {
	for _, rail := range []string{gate.RailDirect, gate.RailFacilitator, railEVM} {
		t.Run(rail, func(t *testing.T) {
			c := newCluster(t)
			var o nodeOptions
			if rail == gate.RailFacilitator {
				o.Facilitator = facilitatortest.New(t)
			}
			a, b := c.start("A", o), c.start("B", o)
			path := "/toll/payability/memo"
			body := fmt.Sprintf(`{"url":%q}`, c.seller)
			var pay map[string]string
			if rail == gate.RailFacilitator {
				pay = map[string]string{facilitator.HeaderPaymentSignature: a.payV2(t, path, c.seller)}
			} else {
				memo := a.mustMemo(t, path, c.seller)
				pay = map[string]string{gate.HeaderPaymentTx: c.chain.pay(memo), gate.HeaderPaymentMemo: memo}
			}
			broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a.s.ServeHTTP(brokenWriter{w}, r)
			}))
			defer broken.Close()
			req, _ := http.NewRequest(http.MethodPost, broken.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range pay {
				req.Header.Set(k, v)
			}
			if res, err := c.client.Do(req); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			if n := c.count(`SELECT count(*) FROM ledger_memo`); n != 1 {
				t.Fatalf("%d ledger entries after the broken answer, want 1", n)
			}
			assertResumedReport(t, b.mustDo(t, http.MethodPost, path, body, pay))
			assertSpent(t, a.mustDo(t, http.MethodPost, path, body, pay))
			if n := c.count(`SELECT count(*) FROM ledger_memo`); n != 1 {
				t.Errorf("%d ledger entries, want 1", n)
			}
		})
	}
}
