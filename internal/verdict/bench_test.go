package verdict

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/benchcpu"
	"github.com/exchangerebel/payability/internal/capture"
)

// Realistic captures for the grader benchmarks: the shapes sellers answer
// with in practice (a v1 body with a v2 header, a v2-only challenge with an
// empty body, an HTML 402, and a fail-closed gate for the seven probes).
// They are built here rather than borrowed from other tests so the numbers
// stay comparable when those tests change.

const benchURL = "https://seller.example/api/v1/weather/current?city=montreal"

func benchHeader(memo string) string {
	h := fmt.Sprintf(`{"x402Version":2,"error":"Payment required","resource":{"url":%q,"description":"Current weather for one city, as JSON.","mimeType":"application/json"},"accepts":[{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"10000","asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","maxTimeoutSeconds":300,"extra":{"feePayer":"5a2xontTE9Zr3upmeB6VuDAQVx7sR1DEbscMUCwSWdwZ","memo":%q,"usdc_token_account":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}}]}`, benchURL, memo)
	return base64.StdEncoding.EncodeToString([]byte(h))
}

func benchBody(memo string) []byte {
	return []byte(fmt.Sprintf(`{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"10000","amount":"10000","resource":%q,"description":"Current weather for one city, as JSON.","mimeType":"application/json","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","maxTimeoutSeconds":300,"asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","outputSchema":{"input":{"type":"http","method":"GET","queryParams":{"city":"string"}},"output":{"type":"object","properties":{"temp_c":{"type":"number"},"conditions":{"type":"string"}}}},"extra":{"feePayer":"5a2xontTE9Zr3upmeB6VuDAQVx7sR1DEbscMUCwSWdwZ","usdc_token_account":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","memo":%q}}]}`, benchURL, memo))
}

func benchChallenge(memo string) capture.Capture {
	return capture.Capture{
		Outcome: capture.OK,
		Status:  402,
		Header: capture.Header{
			"Content-Type":     {"application/json; charset=utf-8"},
			"Payment-Required": {benchHeader(memo)},
			"Date":             {"Sun, 29 Nov 2026 12:00:00 GMT"},
		},
		Body: benchBody(memo),
	}
}

// cpuNsPerOp runs the benchmark loop and also reports cpu-ns/op (benchcpu):
// the machine is shared, and ns/op is wall time.
func cpuNsPerOp(b *testing.B, op func()) {
	b.ReportAllocs()
	defer benchcpu.Report(b)()
	for b.Loop() {
		op()
	}
}

func BenchmarkCheck(b *testing.B) {
	cases := []struct {
		name string
		c    capture.Capture
	}{
		{"populated_v1_body_v2_header", benchChallenge("pv-7f3a9c2e41d84b6f")},
		{"v2_header_empty_body", capture.Capture{Outcome: capture.OK, Status: 402,
			Header: capture.Header{"Content-Type": {"application/json"}, "Payment-Required": {benchHeader("pv-7f3a9c2e41d84b6f")}},
			Body:   []byte("{}")}},
		{"html_402", capture.Capture{Outcome: capture.OK, Status: 402,
			Header: capture.Header{"Content-Type": {"text/html"}},
			Body:   []byte("<!doctype html><html><body><h1>Payment required</h1>" + strings.Repeat("<p>lorem ipsum</p>", 40) + "</body></html>")}},
		{"status_200", capture.Capture{Outcome: capture.OK, Status: 200, Body: []byte(`{"temp_c":3.5}`)}},
		{"timeout", capture.Capture{Outcome: capture.Timeout}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cpuNsPerOp(b, func() { _ = Check(benchURL, tc.c) })
		})
	}
}

func BenchmarkMemo(b *testing.B) {
	cases := []struct {
		name          string
		first, second capture.Capture
	}{
		{"bound", benchChallenge("pv-7f3a9c2e41d84b6f"), benchChallenge("pv-0b1c2d3e4f5a6b7c")},
		{"reused", benchChallenge("pv-7f3a9c2e41d84b6f"), benchChallenge("pv-7f3a9c2e41d84b6f")},
		{"not_a_402", capture.Capture{Outcome: capture.Failed}, benchChallenge("pv-7f3a9c2e41d84b6f")},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cpuNsPerOp(b, func() { _ = Memo(tc.first, tc.second) })
		})
	}
}

func BenchmarkProbe(b *testing.B) {
	reject := func(reason string) capture.Capture {
		return capture.Capture{Outcome: capture.OK, Status: 402,
			Header: capture.Header{"Content-Type": {"application/json"}},
			Body:   []byte(`{"x402Version":2,"error":"` + reason + `","accepts":[]}`)}
	}
	challenge := benchChallenge("pv-7f3a9c2e41d84b6f")
	head := capture.Capture{Outcome: capture.OK, Status: 402, Header: challenge.Header, Body: []byte{}}
	cases := []struct {
		name string
		caps []capture.Capture
	}{
		{"fail_closed", []capture.Capture{challenge, head, challenge,
			reject("invalid_transaction"), reject("invalid_signature"), reject("missing_memo"), reject("invalid_payment_header")}},
		{"absent_rails", []capture.Capture{challenge, head, challenge, challenge, challenge, challenge, challenge}},
		{"fail_open", []capture.Capture{challenge,
			{Outcome: capture.OK, Status: 200, Body: []byte{}},
			{Outcome: capture.OK, Status: 200, Body: []byte(`{"ok":true}`)},
			{Outcome: capture.OK, Status: 200, Body: []byte(`{"ok":true}`)},
			reject("invalid_signature"),
			{Outcome: capture.OK, Status: 500, Body: []byte("<html>oops</html>")},
			{Outcome: capture.OK, Status: 200, Body: []byte(`{"ok":true}`)}}},
		{"not_probed", []capture.Capture{{Outcome: capture.Timeout},
			{Outcome: capture.NotSent}, {Outcome: capture.NotSent}, {Outcome: capture.NotSent},
			{Outcome: capture.NotSent}, {Outcome: capture.NotSent}, {Outcome: capture.NotSent}}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cpuNsPerOp(b, func() { _ = Probe(tc.caps) })
		})
	}
}

// TestBenchCapturesGradeAsNamed keeps the benchmark inputs honest: each
// realistic capture grades to what its name says.
func TestBenchCapturesGradeAsNamed(t *testing.T) {
	if got := Check(benchURL, benchChallenge("pv-7f3a9c2e41d84b6f")).State; got != Populated {
		t.Errorf("populated capture grades %s", got)
	}
	if got := Memo(benchChallenge("pv-7f3a9c2e41d84b6f"), benchChallenge("pv-0b1c2d3e4f5a6b7c")).State; got != "BOUND" {
		t.Errorf("bound pair grades %s", got)
	}
}
