package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/target"
)

// Our own paid routes preflight GO on their paid method (POST with the
// body a caller sends) when the facilitator rail names its fee payer: lint
// clean, a fresh memo on each fetch, HEAD and GET not open, P2 refused by
// the gate itself, and P1 — valid in everything but its signature since
// x402-preflight revision 2 — passed by every check of the gate to the
// facilitator's /verify, which refuses the signature, in both dialects the
// routes advertise; nothing reaches /settle.
func TestOwnGatePreflightsGO(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	fake.Set(func(facilitatortest.Call) facilitatortest.Answer {
		return facilitatortest.Answer{Status: 200, Body: `{"isValid":false,"invalidReason":"invalid_exact_svm_payload_transaction_signature","payer":""}`}
	}, nil)
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: time.Now}
	for _, path := range allPaidRoutes {
		rep, err := runner.Preflight(context.Background(), ops.PreflightRequest{URL: h.srv.URL + path, Method: http.MethodPost,
			Body: []byte(`{"url":"https://seller.example/api"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Decision != preflight.Go {
			t.Errorf("%s: %s %v (probes %+v, matrix %+v, lint %+v, challenge %+v)", path, rep.Decision, rep.Reasons, rep.Probes, rep.MethodMatrix, rep.Lint, rep.Challenge)
		}
		if rep.TermsSHA256 == nil || rep.Challenge.Memo != preflight.FreshChanged {
			t.Errorf("%s: terms %v memo %s", path, rep.TermsSHA256, rep.Challenge.Memo)
		}
	}
	if v, n := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 2*len(allPaidRoutes) || n != 0 {
		t.Errorf("/verify %d calls (want one P1 per dialect per route), /settle %d (want 0)", v, n)
	}
}
