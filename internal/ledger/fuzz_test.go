package ledger

import "testing"

// FuzzParseObservations: the Valet answer parser never panics and returns
// only rates that are plain decimal text within the asked range.
func FuzzParseObservations(f *testing.F) {
	f.Add([]byte(`{"observations":[{"d":"2026-11-27","FXUSDCAD":{"v":"1.3643"}}]}`), "2026-11-20", "2026-11-30")
	f.Add([]byte(`{"observations":[{"d":"2026-11-27","FXUSDCAD":{"v":1.3}}]}`), "2026-11-20", "2026-11-30")
	f.Add([]byte(`[]`), "2026-01-01", "2026-01-02")
	f.Fuzz(func(t *testing.T, body []byte, from, to string) {
		rates, err := parseObservations(body, from, to)
		if err != nil {
			return
		}
		for _, r := range rates {
			if r.Date < from || r.Date > to || !digitsAndPoint(r.Value) {
				t.Fatalf("rate %+v outside %s..%s or not decimal", r, from, to)
			}
		}
	})
}

func digitsAndPoint(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}
