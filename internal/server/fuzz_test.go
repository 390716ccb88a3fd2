package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/ops"
)

// FuzzDecodeStrict: whatever the bytes, decodeStrict never panics, and a
// body it accepts reads the same to any JSON reader: only our exact names,
// each once, so a last-wins or first-wins reader and a case-insensitive one
// all see the url we see.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://a.example/"}`,
		`{"url":"https://a.example/","url":"https://b.example/"}`,
		`{"URL":"x"}`,
		`{"url":"a","caller":"b","op":"memo"}`,
		`{"url":"\u0061","op":{"a":[1,{"b":2}]}}`,
		"{\"url\":\"\xff\"}",
		`[]`, ``, `{"url":"a"} {}`,
		`{"url":"\ud83d\ude00"}`, `{"url":"\ud800"}`, `{"url":"\\ud800"}`, `{"url":"\udc00\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v precheckRequest
		if decodeStrict(body, &v) != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("accepted a body encoding/json refuses: %v", err)
		}
		for k := range m {
			if k != "url" && k != "caller" && k != "op" {
				t.Fatalf("accepted the name %q", k)
			}
		}
		if raw, ok := m["url"]; ok {
			var u *string
			if json.Unmarshal(raw, &u) != nil || (u == nil) != (v.URL == nil) || (u != nil && *u != *v.URL) {
				t.Fatalf("another reader sees url %s, we see %v", raw, v.URL)
			}
		} else if v.URL != nil {
			t.Fatalf("we see a url no other reader sees")
		}
	})
}

// FuzzX402Args: whatever the body of POST /toll/x402/preflight, decoding
// and validating its arguments never panics; a body accepted reads the same
// to encoding/json, its body member is one JSON value; a refused argument
// is a closed code with a static sentence (nothing of the body in it).
func FuzzX402Args(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://a.example/","method":"post","body":{"a":[1,2]},"network":"eip155:8453","max_amount":"100"}`,
		`{"url":"https://a.example/","method":"PUT"}`,
		`{"url":"https://a.example/","body":null}`,
		`{"url":"https://a.example/","network":"base"}`,
		`{"url":"https://a.example/","max_amount":"1e3"}`,
		`{"url":"https://a.example/","body":"x","body":"y"}`,
		`{"url":"https://a.example/","body":{"a":1,"a":2}}`,
	} {
		f.Add([]byte(s))
	}
	sentences := map[string]bool{}
	for _, e := range []string{"method must be GET or POST", "body is over 262144 bytes", "body is not JSON",
		"network must be a CAIP-2 chain id (namespace:reference)", "max_amount must be a decimal integer of atomic units"} {
		sentences[e+"."] = true
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v preflightRequest
		if decodeStrict(raw, &v) != nil {
			return
		}
		if v.Body != nil && !json.Valid(v.Body) {
			t.Fatalf("body member %q is not one JSON value", v.Body)
		}
		_, err := ops.PreflightArgs{URL: deref(v.URL), Method: deref(v.Method), Body: bodyArg(v.Body),
			Network: deref(v.Network), MaxAmount: deref(v.MaxAmount)}.Request()
		if err == nil {
			return
		}
		p, ok := argProblem(err)
		if !ok || !strings.HasSuffix(p.Error, "_invalid") || !sentences[p.Detail] {
			t.Fatalf("refusal %+v (%v) is not a closed code with a static sentence", p, err)
		}
	})
}
