package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// x402-preflight (issue 25): the preflight record and the lint report of a
// seller, sold on the seed services' gate.

// paidX402 pays for path (preflight or lint) on the direct rail with body
// and returns the answer and the payment's signature.
func (h *harness) paidX402(path, body, targetURL string) (response, string) {
	h.t.Helper()
	memo := h.challengeMemo(path, targetURL)
	sig := h.chain.pay(memo)
	return h.do(http.MethodPost, path, body, map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo}), sig
}

func TestPaidPreflightDeliversASignedRecordOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	body := fmt.Sprintf(`{"url":%q,"method":"get","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","max_amount":"5000"}`, seller.URL)
	res, sig := h.paidX402("/toll/x402/preflight", body, seller.URL)
	if res.status != http.StatusOK {
		t.Fatalf("paid preflight: %d %s", res.status, res.body)
	}
	if _, err := report.Verify(res.body, h.keys); err != nil {
		t.Fatalf("the record does not verify: %v", err)
	}
	var rec struct {
		Document, Op, URL, Method, Decision, Summary string
		Reasons                                      []string
		Payment                                      struct{ Rail, Tx string }
		Price                                        struct {
			USDCUnits string `json:"usdc_units"`
		}
	}
	if err := json.Unmarshal(res.body, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Document != "x402-preflight/v1" || rec.Op != ops.OpPreflight || rec.URL != seller.URL || rec.Method != http.MethodGet ||
		rec.Decision == "" || rec.Payment.Tx != sig || rec.Price.USDCUnits != "20000" {
		t.Errorf("record %+v", rec)
	}
	e := assertOneEntry(t, h, store.OpPreflight)
	if e.Preflight.Decision != rec.Decision || e.Preflight.Reasons != strings.Join(rec.Reasons, " ") ||
		e.VerdictLine != rec.Summary || e.CriteriaVersion != "x402-preflight/v1@2" || e.PriceUSDCUnits != 20000 || e.PaymentTx != sig {
		t.Errorf("ledger entry %+v %+v", e, *e.Preflight)
	}
	again := h.do(http.MethodPost, "/toll/x402/preflight", body, map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: entriesMemo(t, h, sig)})
	assertSpent(t, again)
	assertOneEntry(t, h, store.OpPreflight)
}

func TestPaidLintDeliversASignedReportOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	body := fmt.Sprintf(`{"url":%q,"method":"POST","body":{"city":"Lyon"}}`, seller.URL)
	res, sig := h.paidX402("/toll/x402/lint", body, seller.URL)
	if res.status != http.StatusOK {
		t.Fatalf("paid lint: %d %s", res.status, res.body)
	}
	if _, err := report.Verify(res.body, h.keys); err != nil {
		t.Fatalf("the report does not verify: %v", err)
	}
	var rep struct {
		ops.LintReport
		Payment struct{ Tx string }
		Price   struct {
			USDCUnits string `json:"usdc_units"`
		}
	}
	if err := json.Unmarshal(res.body, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Op != ops.OpLint || rep.Method != http.MethodPost || rep.Status != http.StatusPaymentRequired || rep.Conforms ||
		rep.Payment.Tx != sig || rep.Price.USDCUnits != "10000" {
		t.Errorf("report %+v", rep)
	}
	errs, warns := rep.Counts()
	e := assertOneEntry(t, h, store.OpLint)
	if e.Lint.Conforms || e.Lint.ErrorsCount != errs || e.Lint.WarningsCount != warns || errs == 0 ||
		e.VerdictLine != rep.LintLine() || e.CriteriaVersion != rep.Rules.ID+"@"+rep.Rules.Revision {
		t.Errorf("ledger entry %+v %+v (report %d errors, %d warnings)", e, *e.Lint, errs, warns)
	}
	assertSpent(t, h.do(http.MethodPost, "/toll/x402/lint", body, map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: entriesMemo(t, h, sig)}))
}

// TestX402BodiesAreDecodedStrictly: every refusal of a body or an argument
// is free (a 400 with a closed code), with or without a payment presented,
// and a presented payment is not consumed by it.
func TestX402BodiesAreDecodedStrictly(t *testing.T) {
	h := newHarness(t, ServeAll)
	const u = `"https://seller.example/api"`
	for _, tc := range []struct {
		name, path, body, code string
	}{
		{"unknown member", "/toll/x402/preflight", `{"url":` + u + `,"service_id":"x"}`, errBodyMalformed},
		{"member in another case", "/toll/x402/preflight", `{"URL":` + u + `}`, errBodyMalformed},
		{"repeated url", "/toll/x402/preflight", `{"url":` + u + `,"url":` + u + `}`, errBodyMalformed},
		{"repeated name in the body value", "/toll/x402/preflight", `{"url":` + u + `,"body":{"a":1,"a":2}}`, errBodyMalformed},
		{"trailing data", "/toll/x402/lint", `{"url":` + u + `} {}`, errBodyMalformed},
		{"network on lint", "/toll/x402/lint", `{"url":` + u + `,"network":"eip155:8453"}`, errBodyMalformed},
		{"max_amount on lint", "/toll/x402/lint", `{"url":` + u + `,"max_amount":"1"}`, errBodyMalformed},
		{"method a number", "/toll/x402/preflight", `{"url":` + u + `,"method":1}`, errBodyMalformed},
		{"no url", "/toll/x402/preflight", `{"method":"GET"}`, errURLMissing},
		{"url policy", "/toll/x402/lint", `{"url":"ftp://seller.example/"}`, "url_scheme"},
		{"preflight method PUT", "/toll/x402/preflight", `{"url":` + u + `,"method":"PUT"}`, "method_invalid"},
		{"lint method HEAD", "/toll/x402/lint", `{"url":` + u + `,"method":"HEAD"}`, "method_invalid"},
		{"lint body without POST", "/toll/x402/lint", `{"url":` + u + `,"body":{}}`, "body_invalid"},
		{"network not CAIP-2", "/toll/x402/preflight", `{"url":` + u + `,"network":"base"}`, "network_invalid"},
		{"max_amount a decimal", "/toll/x402/preflight", `{"url":` + u + `,"max_amount":"0.5"}`, "max_amount_invalid"},
		{"max_amount negative", "/toll/x402/preflight", `{"url":` + u + `,"max_amount":"-1"}`, "max_amount_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do(http.MethodPost, tc.path, tc.body, nil)
			if res.status != http.StatusBadRequest || errorCode(res.body) != tc.code {
				t.Errorf("unpaid: %d %s, want 400 %s", res.status, res.body, tc.code)
			}
			if tc.code == errBodyMalformed || tc.code == errURLMissing || tc.code == "url_scheme" {
				return // refused before the gate, or a URL no memo is bound to
			}
			// With a payment of the route: the same free 400, and the
			// payment is still good for a valid body afterwards.
			memo := h.challengeMemo(tc.path, "https://seller.example/api")
			pay := map[string]string{gate.HeaderPaymentTx: h.chain.pay(memo), gate.HeaderPaymentMemo: memo}
			if res := h.do(http.MethodPost, tc.path, tc.body, pay); res.status != http.StatusBadRequest || errorCode(res.body) != tc.code {
				t.Errorf("paid: %d %s, want 400 %s", res.status, res.body, tc.code)
			}
		})
	}
	// The argument sentences are static: nothing of the body is echoed.
	res := h.do(http.MethodPost, "/toll/x402/preflight", `{"url":`+u+`,"network":"CANARY-net"}`, nil)
	if bytes.Contains(res.body, []byte("CANARY")) || bytes.Contains(res.body, []byte("seller.example")) {
		t.Errorf("a refusal echoes the request: %s", res.body)
	}
}

// TestX402ChallengesCarryTheirPrices: each route's challenge asks its own
// price on both legs, names its resource, and describes its own body in the
// bazaar extension.
func TestX402ChallengesCarryTheirPrices(t *testing.T) {
	h := newHarness(t, ServeAll)
	for path, want := range map[string]string{"/toll/x402/preflight": "20000", "/toll/x402/lint": "10000"} {
		res := h.do(http.MethodGet, path, "", nil)
		if res.status != http.StatusPaymentRequired {
			t.Fatalf("%s: %d", path, res.status)
		}
		var v1 struct {
			Accepts []struct{ Amount, MaxAmountRequired, Resource string }
		}
		json.Unmarshal(res.body, &v1)
		v2 := decodeHeader(t, res.header.Get(gateHeader))
		raw, _ := json.Marshal(v2)
		var hdr struct {
			Accepts    []struct{ Amount string }
			Extensions struct {
				Bazaar struct {
					Info struct {
						Input  struct{ Body map[string]any }
						Output struct{ Example map[string]any }
					}
				}
			}
		}
		json.Unmarshal(raw, &hdr)
		if len(v1.Accepts) != 1 || v1.Accepts[0].Amount != want || v1.Accepts[0].MaxAmountRequired != want ||
			v1.Accepts[0].Resource != h.srv.URL+path || len(hdr.Accepts) != 1 || hdr.Accepts[0].Amount != want {
			t.Errorf("%s: v1 %+v v2 %+v, want %s", path, v1, hdr.Accepts, want)
		}
		if hdr.Extensions.Bazaar.Info.Input.Body["url"] == nil || hdr.Extensions.Bazaar.Info.Output.Example["op"] != path[len("/toll/x402/"):] {
			t.Errorf("%s: bazaar %+v", path, hdr.Extensions.Bazaar.Info)
		}
	}
}

// TestX402CriteriaServesBothDocuments: GET /toll/x402/criteria is the two
// documents exactly as payability criteria x402-preflight / x402-lint
// print them.
func TestX402CriteriaServesBothDocuments(t *testing.T) {
	h := newHarness(t, ServeAll)
	res := h.do(http.MethodGet, "/toll/x402/criteria", "", nil)
	var docs map[string]json.RawMessage
	if res.status != http.StatusOK || json.Unmarshal(res.body, &docs) != nil || len(docs) != 2 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	pre, _ := corpus.PreflightDocument()
	rules, _ := corpus.LintRules()
	if !bytes.Equal(docs["x402-preflight/v1"], bytes.TrimSpace(pre)) || !bytes.Equal(docs["x402-lint/v1"], bytes.TrimSpace(rules)) {
		t.Error("the served documents differ from the embedded ones")
	}
}

// TestX402FreeAllowanceIsTheOperators: the pre-check of x402-preflight is
// counted apart from the seed services, at the operator's allowance, and
// its exhaustion offers the paid challenge of the op pre-checked.
func TestX402FreeAllowanceIsTheOperators(t *testing.T) {
	h := newHarness(t, ServeAll)
	h.s.cfg.FreePerCallerX402 = 2
	wallet := testWallet("x402-free")
	call := func(op string) response {
		h.clock.Add(6e9) // past the minimum interval
		return h.do(http.MethodPost, "/toll/x402/precheck", fmt.Sprintf(`{"url":"https://seller.example/api","caller":%q,"op":%q}`, wallet, op), nil)
	}
	for i, op := range []string{"preflight", "lint"} {
		res := call(op)
		var p Precheck
		json.Unmarshal(res.body, &p)
		if res.status != http.StatusOK || p.Service != "x402-preflight" || p.PrecheckOp != op || p.FreeCallsPerDay != 2 ||
			p.FreeCallsUsedToday == nil || *p.FreeCallsUsedToday != i+1 || !p.InPolicy {
			t.Fatalf("free %s: %d %s", op, res.status, res.body)
		}
		if _, err := report.Verify(res.body, h.keys); err != nil {
			t.Errorf("the pre-check does not verify: %v", err)
		}
	}
	res := call("lint")
	if res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodeFreeDailyLimit) ||
		!strings.Contains(string(res.body), `"amount":"10000"`) || !strings.Contains(string(res.body), h.srv.URL+"/toll/x402/lint") {
		t.Errorf("third call: %d %s, want 402 free_daily_limit with the lint challenge", res.status, res.body)
	}
	// The seed services' allowance is their own.
	if res := h.do(http.MethodPost, "/toll/payability/precheck", fmt.Sprintf(`{"url":"https://seller.example/api","caller":%q}`, wallet), nil); res.status != http.StatusOK {
		t.Errorf("payability pre-check after x402's allowance: %d %s", res.status, res.body)
	}
	if res := call("check"); res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "op must be preflight or lint.") {
		t.Errorf("op check on x402-preflight: %d %s", res.status, res.body)
	}
}

// TestX402SingleServiceWorker: --service x402-preflight answers at the bare
// paths too, and sells nothing else.
func TestX402SingleServiceWorker(t *testing.T) {
	h := newHarness(t, "x402-preflight")
	for _, path := range []string{"/preflight", "/lint", "/toll/x402/preflight", "/toll/x402/lint"} {
		if res := h.do(http.MethodGet, path, "", nil); res.status != http.StatusPaymentRequired {
			t.Errorf("GET %s: %d", path, res.status)
		}
	}
	res := h.do(http.MethodPost, "/check", `{"url":"https://seller.example/api"}`, nil)
	if res.status != http.StatusNotFound || !strings.Contains(string(res.body), "check belongs to payability-verdict") {
		t.Errorf("POST /check: %d %s", res.status, res.body)
	}
}

// TestX402PageShowsItsPrices: the service's page lists both ops with the
// configured prices, its documents and its own sentences.
func TestX402PageShowsItsPrices(t *testing.T) {
	h := newHarness(t, ServeAll)
	h.gate.Offers[ops.OpLint] = gate.Offer{Op: ops.OpLint, Price: 15000, Description: "lint"}
	page := string(h.do(http.MethodGet, "/toll/x402/", "", nil).body)
	for _, want := range []string{"POST /toll/x402/preflight", "$0.02 — 20000 USDC units per endpoint",
		"POST /toll/x402/lint", "$0.015 — 15000 USDC units per endpoint",
		`href="/toll/x402/criteria"`, x402Never, "x402-preflight-corpus/v1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the x402-preflight page lacks %q", want)
		}
	}
}

func TestPriceLabelIsExact(t *testing.T) {
	for units, want := range map[uint64]string{10000: "$0.01", 20000: "$0.02", 15000: "$0.015", 1: "$0.000001", 1000000: "$1.00", 1234500000: "$1234.50", 0: "$0.00"} {
		if got := PriceLabel(units); got != want {
			t.Errorf("PriceLabel(%d) = %q, want %q", units, got, want)
		}
	}
}
