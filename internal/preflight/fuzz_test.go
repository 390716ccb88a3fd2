package preflight

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
)

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// FuzzParseChallenge: terms-hash's input parser never panics, is
// deterministic, prints only well-formed hashes and passes no free text.
func FuzzParseChallenge(f *testing.F) {
	v2doc := `{"x402Version":2,"resource":{"url":"https://s.example/a"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60}]}`
	f.Add([]byte(v2doc))
	f.Add([]byte(base64.StdEncoding.EncodeToString([]byte(v2doc))))
	f.Add([]byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1","resource":"https://s.example/a","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":6e1}]}`))
	f.Add([]byte(`{"x402Version":1,"accepts":[null,1,"x",{}]}`))
	f.Add([]byte("  \n"))
	f.Add([]byte(`{"accepts":[{"maxTimeoutSeconds":1e400}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		hs, ok := ParseChallenge(raw)
		again, ok2 := ParseChallenge(raw)
		if ok != ok2 || !reflect.DeepEqual(hs, again) {
			t.Fatal("not deterministic")
		}
		if !ok && hs != nil {
			t.Fatal("entries for an unreadable input")
		}
		for _, h := range hs {
			if h.TermsSHA256 != nil && !hexHash.MatchString(*h.TermsSHA256) {
				t.Fatalf("hash %q", *h.TermsSHA256)
			}
			for _, id := range []string{h.Scheme, h.Network} {
				if id != "" && !identPattern().MatchString(id) {
					t.Fatalf("identifier %q passed", id)
				}
			}
			if h.Leg != lint.LegHeader && h.Leg != lint.LegBody {
				t.Fatalf("leg %q", h.Leg)
			}
		}
	})
}

// FuzzEvaluate: any unpaid answer (header value and body) with any probe
// answer plans and decides without panicking; the record's reasons are in
// table order, its decision follows from them, and P1's bytes, when built,
// are base64 of one JSON object.
func FuzzEvaluate(f *testing.F) {
	v2doc := `{"x402Version":2,"resource":{"url":"https://s.example/a"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60,"extra":{"memo":"m"}}]}`
	f.Add(base64.StdEncoding.EncodeToString([]byte(v2doc)), []byte(`{}`), 402, []byte(`{"error":"x"}`))
	f.Add("", []byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"1","resource":"r","asset":"a","payTo":"p","maxTimeoutSeconds":1}]}`), 200, []byte(``))
	f.Add("e30=", []byte(`[]`), 500, []byte(`{"reason":""}`))
	order := map[Reason]int{}
	for i, r := range append(StopReasons(), HoldReasons()...) {
		order[r] = i
	}
	f.Fuzz(func(t *testing.T, header string, body []byte, status int, answer []byte) {
		c := capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{}, Body: body}
		if header != "" {
			c.Header["Payment-Required"] = []string{header}
		}
		ch := lint.Decode(c)
		res := lint.Result{Status: 402}
		for _, d := range []*lint.Document{ch.Header, ch.Body} {
			if d != nil {
				for i := range d.Accepts {
					res.Entries = append(res.Entries, lint.EntrySummary{Index: i, Leg: d.Leg})
				}
			}
		}
		sel, probes := Plan(c, res, Options{}, "GET", []byte(`{}`), ProbeEnv{Now: testNow, Rand: &stream{seed: header}})
		if v, ok := P1Value(sel.Selected, ProbeEnv{Now: testNow, Rand: &stream{seed: "f"}}); ok {
			raw, err := base64.StdEncoding.DecodeString(v)
			if err != nil || !json.Valid(raw) || raw[0] != '{' {
				t.Fatalf("P1 is not base64 of a JSON object: %q", raw)
			}
		}
		a := capture.Capture{Outcome: capture.OK, Status: status, Header: capture.Header{}, Body: answer}
		in := Input{Lint: []Fetch{{Method: "GET", Capture: c}}, LintResult: res, Second: &c}
		for _, p := range probes {
			in.Answers = append(in.Answers, Answer{ID: p.ID, Dialect: p.Dialect, Method: p.Method, Capture: a})
		}
		r := Evaluate(in)
		stop := false
		for i, reason := range r.Reasons {
			if i > 0 && order[reason] <= order[r.Reasons[i-1]] {
				t.Fatalf("reasons out of order: %v", r.Reasons)
			}
			stop = stop || order[reason] < len(StopReasons())
		}
		switch {
		case stop && r.Decision != Stop, !stop && len(r.Reasons) > 0 && r.Decision != Hold, len(r.Reasons) == 0 && r.Decision != Go:
			t.Fatalf("decision %s for %v", r.Decision, r.Reasons)
		}
	})
}
