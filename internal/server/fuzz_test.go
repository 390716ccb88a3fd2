package server

import (
	"encoding/json"
	"testing"
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
