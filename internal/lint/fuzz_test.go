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

// FuzzParseDiscovery: any document body of any leg parses without
// panicking; every finding is a published rule of the origin family with its
// published severity; every listing it returns names GET, POST or no method
// and a body of at most the listing cap. Then the whole origin lint of that
// document with every listed resource answering the same body grades
// without panicking, its conforms exactly "no error anywhere".
func FuzzParseDiscovery(f *testing.F) {
	f.Add(uint8(0), []byte(`{"version":1,"resources":["https://a.example/x","/y",1]}`))
	f.Add(uint8(1), []byte(`{"x402Version":2,"items":[{"resource":{"url":"https://a.example/x"},"type":"http","accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1"}],"input":{"method":"POST","body":{"q":1}}}]}`))
	f.Add(uint8(2), []byte(`{"openapi":"3.1.0","servers":[{"url":"/v1"}],"paths":{"/x":{"get":{"x-payment-info":{"price":{"mode":"fixed","currency":"USD","amount":"$0.01"}}}},"/y/{id}":{"post":{"x-payment-info":{"pricingMode":"fixed","price":1e3}}}}}`))
	f.Add(uint8(2), []byte(`{"openapi":"3","servers":[{"url":"%zz"}],"paths":{}}`))
	legs := []Leg{LegWellKnown, LegManifest, LegOpenAPI}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		leg := legs[int(which)%len(legs)]
		ls, fs := ParseDiscovery(leg, "https://a.example", body)
		for _, fd := range fs {
			rule, ok := RuleByID(fd.Rule)
			if !ok || rule.Family != "origin" || rule.Severity != fd.Severity || fd.Leg != leg {
				t.Fatalf("finding %+v", fd)
			}
		}
		for _, l := range ls {
			if (l.Method != "GET" && l.Method != "POST" && l.Method != MethodFallback) || len(l.Body) > maxListingBody || l.Leg != leg {
				t.Fatalf("listing %+v", l)
			}
		}
		doc := DocumentCapture{Leg: leg, URL: "https://a.example/d", Capture: capture.Capture{Outcome: capture.OK, Status: 200, Body: body}}
		plan := PlanOrigin("https://a.example", []DocumentCapture{doc})
		if len(plan.Targets) > MaxOriginResources {
			t.Fatalf("%d targets", len(plan.Targets))
		}
		var live []LiveCapture
		for _, tg := range plan.Targets {
			live = append(live, LiveCapture{Target: tg, Method: "GET", Capture: capture.Capture{Outcome: capture.OK, Status: 402, Body: body}})
		}
		r := LintOrigin(OriginInput{Origin: "https://a.example", Documents: []DocumentCapture{doc}, Live: live, Now: time.Unix(0, 0)})
		hasErr := false
		for _, fd := range r.Findings {
			hasErr = hasErr || fd.Severity == Error
		}
		for _, rr := range r.Resources {
			hasErr = hasErr || !rr.Result.Conforms
		}
		if r.Conforms == hasErr {
			t.Fatalf("conforms %v with errors %v", r.Conforms, hasErr)
		}
	})
}
