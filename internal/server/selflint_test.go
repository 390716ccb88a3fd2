package server

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/target"
)

// With both rails configured, our own challenges meet the rules issue 13
// gives `payability lint` (each checked here directly until the lint op
// lands and a test runs it against us): Cache-Control no-store, CORS
// exposing PAYMENT-REQUIRED; on both legs every entry exact on Solana with
// a CAIP-2 network on v2 and the legacy name on v1, a positive amount
// without leading zeros, base58 32-byte asset, payTo and feePayer,
// maxTimeoutSeconds in (0, 3600], resource equal to the called URL, a memo
// of at most 256 bytes and a description of at most 500 characters; and
// the two legs describe the same offer.
func TestOwnChallengesMeetTheLintRulesWithBothRails(t *testing.T) {
	h := newHarness(t, ServeAll)
	withFacilitator(t, h)
	amountRe := regexp.MustCompile(`^[1-9][0-9]*$`)
	for _, path := range allPaidRoutes {
		for _, req := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPost, `{"url":"https://example.com/x"}`}} {
			res := h.do(req.method, path, req.body, map[string]string{"Content-Type": "application/json"})
			called := h.srv.URL + path
			if res.status != 402 || res.header.Get("Cache-Control") != "no-store" ||
				!strings.Contains(res.header.Get("Access-Control-Expose-Headers"), "PAYMENT-REQUIRED") {
				t.Fatalf("%s %s: %d %v", req.method, path, res.status, res.header)
			}
			var v2 struct {
				X402Version int `json:"x402Version"`
				Resource    struct{ URL, Description string }
				Accepts     []struct {
					Scheme, Network, Amount, Asset, PayTo string
					MaxTimeoutSeconds                     int
					Extra                                 struct{ FeePayer, Memo string }
				}
			}
			raw, _ := json.Marshal(decodeHeader(t, res.header.Get("PAYMENT-REQUIRED")))
			json.Unmarshal(raw, &v2)
			var v1 struct {
				X402Version int `json:"x402Version"`
				Accepts     []struct {
					Scheme, Network, Amount, MaxAmountRequired, Asset, PayTo, Resource, Description string
					MaxTimeoutSeconds                                                               int
					Extra                                                                           struct{ FeePayer, Memo string }
				}
			}
			json.Unmarshal(res.body, &v1)
			where := req.method + " " + path
			if v2.X402Version != 2 || v1.X402Version != 1 || len(v2.Accepts) == 0 || len(v2.Accepts) != len(v1.Accepts) {
				t.Fatalf("%s: versions %d/%d, entries %d/%d", where, v2.X402Version, v1.X402Version, len(v2.Accepts), len(v1.Accepts))
			}
			if v2.Resource.URL != called || len(v2.Resource.Description) > 500 {
				t.Errorf("%s: v2 resource %q (description %d chars)", where, v2.Resource.URL, len(v2.Resource.Description))
			}
			for i, a := range v2.Accepts {
				b := v1.Accepts[i]
				switch {
				case a.Scheme != "exact" || b.Scheme != "exact":
					t.Errorf("%s[%d]: scheme %q/%q", where, i, a.Scheme, b.Scheme)
				case a.Network != gate.Mainnet.CAIP2 || b.Network != gate.Mainnet.Name:
					t.Errorf("%s[%d]: network %q/%q", where, i, a.Network, b.Network)
				case !amountRe.MatchString(a.Amount) || a.Amount != b.Amount || b.Amount != b.MaxAmountRequired:
					t.Errorf("%s[%d]: amounts %q %q %q", where, i, a.Amount, b.Amount, b.MaxAmountRequired)
				case a.Asset != b.Asset || a.PayTo != b.PayTo || !solana.ValidAddress(a.Asset) || !solana.ValidAddress(a.PayTo):
					t.Errorf("%s[%d]: asset or payTo invalid or different across legs", where, i)
				case !solana.ValidAddress(a.Extra.FeePayer) || a.Extra.FeePayer != b.Extra.FeePayer:
					t.Errorf("%s[%d]: feePayer %q/%q", where, i, a.Extra.FeePayer, b.Extra.FeePayer)
				case a.MaxTimeoutSeconds <= 0 || a.MaxTimeoutSeconds > 3600 || a.MaxTimeoutSeconds != b.MaxTimeoutSeconds:
					t.Errorf("%s[%d]: maxTimeoutSeconds %d/%d", where, i, a.MaxTimeoutSeconds, b.MaxTimeoutSeconds)
				case len(a.Extra.Memo) == 0 || len(a.Extra.Memo) > 256 || a.Extra.Memo != b.Extra.Memo:
					t.Errorf("%s[%d]: memo of %d bytes, equal across legs %v", where, i, len(a.Extra.Memo), a.Extra.Memo == b.Extra.Memo)
				case b.Resource != called || len(b.Description) > 500:
					t.Errorf("%s[%d]: v1 resource %q", where, i, b.Resource)
				}
			}
		}
	}
	// The discovery manifest's advisory requirements name the fee payer too.
	var man struct {
		Items []struct {
			Accepts []struct{ Extra struct{ FeePayer string } }
		}
	}
	json.Unmarshal(h.do(http.MethodGet, "/.well-known/x402.json", "", nil).body, &man)
	for _, it := range man.Items {
		if it.Accepts[0].Extra.FeePayer != h.gate.Terms.FeePayer {
			t.Errorf("manifest item without the fee payer: %+v", it)
		}
	}
}

// `payability lint --method POST --body {"url":…}` on each of our paid
// routes, with both rails configured, gives 0 errors and 0 warnings (and so
// does a plain GET): the x402-lint/v1 rules hold for our own challenges.
func TestOwnChallengesLintClean(t *testing.T) {
	h := newHarness(t, ServeAll)
	withFacilitator(t, h)
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: time.Now}
	body := []byte(`{"url":"https://example.com/paid"}`)
	for _, path := range allPaidRoutes {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			rep, err := runner.Lint(context.Background(), h.srv.URL+path, method, body)
			if err != nil {
				t.Fatalf("lint %s %s: %v", method, path, err)
			}
			errs, warns := rep.Counts()
			if errs != 0 || warns != 0 || !rep.Conforms || rep.Status != http.StatusPaymentRequired {
				t.Errorf("lint %s %s: %d errors, %d warnings, status %d", method, path, errs, warns, rep.Status)
				for _, f := range rep.Findings {
					t.Logf("  %s %s %s %s: %s", f.Severity, f.Rule, f.Leg, f.Field, f.Message)
				}
			}
		}
	}
}
