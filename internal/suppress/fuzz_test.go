package suppress

import (
	"testing"
	"time"
)

// FuzzParseConfig: any bytes give a config or an *Error, never a panic; a
// config accepted is valid (every entry has a rule and a reason).
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"ignore": [{"rule": "status_not_402", "url": "https://a.example/*", "field": "http:status", "reason": "free", "until": "2027-01-31"}], "baseline": "b.json"}`))
	f.Add([]byte(`{"ignore": [], "ignore": []}`))
	f.Add([]byte(`{"ignore": [[[[[[[[[[]]]]]]]]]]}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		for _, ig := range c.Ignore {
			if ig.Rule == "" || ig.Reason == "" {
				t.Fatalf("accepted an entry without a rule or reason: %+v", ig)
			}
			_ = ig.Expired(time.Unix(0, 0))
		}
	})
}

// FuzzParseBaseline: any bytes give a baseline or an *Error.
func FuzzParseBaseline(f *testing.F) {
	f.Add(NewBaseline(results()))
	f.Add([]byte(`{"version": "1", "findings": [{"rule": "r", "url": "", "entry": 3, "fingerprint": "00"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseBaseline(data); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
		}
	})
}
