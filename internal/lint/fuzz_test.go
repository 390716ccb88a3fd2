package lint

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// FuzzLint: any header value and body grade without panicking, every
// finding is a published rule with its published severity, and conforms is
// exactly "no error".
func FuzzLint(f *testing.F) {
	f.Add("", []byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1"}]}`))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"resource":{"url":"https://a.example/x"},"accepts":[{"scheme":"upto","network":"solana:x","extra":{"memo":1}}],"extensions":{"bazaar":{"info":{},"schema":{"$ref":"#/a"}},"sign-in-with-x":{"info":{"issuedAt":"x"}}}}`)), []byte("{}"))
	f.Add("%%", []byte(`{"x402Version":2,"accepts":[1,{"maxTimeoutSeconds":1e999}]}`))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		h := capture.Header{}
		if header != "" {
			h["Payment-Required"] = []string{header}
		}
		c := capture.Capture{Outcome: capture.OK, Status: 402, Header: h, Body: body}
		in := Input{URL: "https://a.example/x", Method: "GET", Capture: c, Now: time.Unix(0, 0)}
		r := Lint(in)
		hasErr := false
		for _, fd := range r.Findings {
			rule, ok := RuleByID(fd.Rule)
			if !ok || rule.Severity != fd.Severity || fd.Message == "" {
				t.Fatalf("finding %+v", fd)
			}
			hasErr = hasErr || fd.Severity == Error
		}
		if r.Conforms == hasErr {
			t.Fatalf("conforms %v with errors %v", r.Conforms, hasErr)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		_ = ChainQueries(in)
	})
}
