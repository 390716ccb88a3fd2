package monitor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

func TestParseConfigGood(t *testing.T) {
	c := mustParse(t, "testdata/good.json")
	if len(c.Endpoints) != 2 || len(c.Webhooks) != 1 {
		t.Fatalf("got %d endpoints, %d webhooks", len(c.Endpoints), len(c.Webhooks))
	}
	w := c.Endpoints[0]
	if w.ID != "weather" || w.Method != "GET" || w.Every != 10*time.Minute || w.Network != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" ||
		w.MaxAmount != "10000" || strings.Join(w.Ops, ",") != "preflight,lint,check" {
		t.Errorf("weather: %+v", w)
	}
	s := c.Endpoints[1]
	if s.Method != "POST" || s.Body != `{"q":"x"}` || s.Every != time.Second {
		t.Errorf("search.v2: %+v (1s is the minimum, allowed)", s)
	}
	if c.Retention != 7*24*time.Hour {
		t.Errorf("retention %s, want 168h", c.Retention)
	}
	if h := c.Webhooks[0]; h.SecretEnv != "PAYABILITY_WEBHOOK_SECRET" || h.Events[0] != EventOutcomeChanged {
		t.Errorf("webhook: %+v", h)
	}
}

func TestRetentionDefaultsTo30Days(t *testing.T) {
	c, err := ParseConfig([]byte(`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Retention != 30*24*time.Hour {
		t.Errorf("retention %s, want 720h", c.Retention)
	}
	c, err = ParseConfig([]byte(`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}], "retention": "1h"}`))
	if err != nil || c.Retention != time.Hour {
		t.Errorf("retention 1h (the minimum): %v, %v", c, err)
	}
}

// TestParseConfigBad: one file per refusal, each naming its field, line and
// column.
func TestParseConfigBad(t *testing.T) {
	for _, tc := range []struct {
		file, field string
		line, col   int
		reason      string
	}{
		{"unknown_top_key", "retension", 2, 2, "unknown key"},
		{"unknown_endpoint_key", "endpoints[0].interval", 2, 77, "unknown key"},
		{"unknown_webhook_key", "webhooks[0].secret", 2, 95, "unknown key"},
		{"repeated_key", "endpoints[0].id", 1, 28, "repeated key"},
		{"syntax", "endpoints[0]", 2, 31, "JSON syntax error"},
		{"wrong_type", "endpoints[0].ops", 2, 10, "wrong type"},
		{"no_endpoints", "endpoints", 1, 15, "at least one endpoint or source"},
		{"source_bad_kind", "sources[0].kind", 1, 71, "want bazaar, wellknown or list"},
		{"source_every_30s", "sources[0].every", 1, 69, "from 1m to 30d"},
		{"source_repeated", "sources[1].url", 2, 10, "repeats an earlier source's url"},
		{"source_bad_op", "sources[0].ops", 1, 67, "want preflight"},
		{"source_unknown_key", "sources[0].description", 1, 60, "unknown key"},
		{"retire_after_30m", "retire_after", 1, 78, "between 1h and 3650d"},
		{"bad_id", "endpoints[0].id", 1, 23, "want 1 to 64"},
		{"duplicate_id", "endpoints[1].id", 2, 10, "repeats an earlier endpoint's id"},
		{"missing_url", "endpoints[0].url", 1, 16, "is required"},
		{"url_policy", "endpoints[0].url", 1, 35, "URL policy"},
		{"bad_method", "endpoints[0].method", 1, 67, "want GET or POST"},
		{"body_without_post", "endpoints[0].body", 1, 65, "needs method POST"},
		{"no_ops", "endpoints[0].ops", 1, 64, "at least one op"},
		{"unknown_op", "endpoints[0].ops[1]", 1, 74, "want preflight"},
		{"repeated_op", "endpoints[0].ops[1]", 1, 74, "repeats an earlier op"},
		{"missing_every", "endpoints[0].every", 1, 16, "is required"},
		{"bad_every", "endpoints[0].every", 1, 84, "want a duration"},
		{"every_999ms", "endpoints[0].every", 1, 84, "at least 1s"},
		{"bad_network", "endpoints[0].network", 1, 101, "CAIP-2 network id"},
		{"bad_max_amount", "endpoints[0].max_amount", 1, 104, "decimal integer"},
		{"webhook_bad_env", "webhooks[0].secret_env", 2, 59, "environment variable"},
		{"webhook_bad_event", "webhooks[0].events[0]", 2, 75, "want outcome_changed"},
		{"webhook_no_events", "webhooks[0].events", 2, 74, "at least one event"},
		{"retention_59m", "retention", 1, 105, "at least 1h"},
		{"two_documents", "", 1, 92, "more than one JSON document"},
		{"webhook_repeated", "webhooks[1]", 2, 109, "repeats an earlier webhook's id and url"},
		{"webhook_bad_id", "webhooks[0].id", 2, 22, "want 1 to 64"},
		{"trailing_junk", "", 1, 92, "trailing data after the document"},
		{"trailing_nul", "", 2, 1, "trailing data after the document"},
		{"every_over_30d", "endpoints[0].every", 1, 84, "at most 30d"},
		{"retention_over_3650d", "retention", 1, 105, "at most 3650d"},
		{"nested_33", "endpoints[0].body" + strings.Repeat("[0]", 29), 1, 127, "nested deeper than 32 levels"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/bad", tc.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseConfig(data)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Field != tc.field || ce.Line != tc.line || ce.Column != tc.col || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("got %q (field %q line %d col %d), want field %q line %d col %d reason ~%q",
					ce.Error(), ce.Field, ce.Line, ce.Column, tc.field, tc.line, tc.col, tc.reason)
			}
		})
	}
}

// TestConfigErrorsNeverQuoteValues: a refused value is named by its path,
// never echoed (a URL may carry a token).
func TestConfigErrorsNeverQuoteValues(t *testing.T) {
	const canary = "CANARY-7f3a"
	for _, doc := range []string{
		`{"endpoints": [{"id": "a", "url": "ftp://` + canary + `/", "ops": ["check"], "every": "1m"}]}`,
		`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "` + canary + `"}]}`,
		`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["` + canary + `"], "every": "1m"}]}`,
		`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m", "` + canary + `": 1}]}`,
		`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}], "webhooks": [{"url": "https://h/", "secret_env": "` + canary + `", "events": ["outcome_changed"]}]}`,
	} {
		_, err := ParseConfig([]byte(doc))
		if err == nil {
			t.Fatalf("%s: accepted", doc)
		}
		// An unknown key is a field path, which names the key itself; the
		// values stay out.
		if strings.Contains(err.Error(), canary) && !strings.Contains(doc, `"`+canary+`":`) {
			t.Errorf("error quotes a value: %v", err)
		}
	}
}

func TestConfigLimits(t *testing.T) {
	ep := func(i int) string {
		return fmt.Sprintf(`{"id": "e%d", "url": "https://x.example/", "ops": ["check"], "every": "1m"}`, i)
	}
	many := func(n int) []byte {
		var parts []string
		for i := range n {
			parts = append(parts, ep(i))
		}
		return []byte(`{"endpoints": [` + strings.Join(parts, ",") + `]}`)
	}
	if _, err := ParseConfig(many(MaxEndpoints)); err != nil {
		t.Errorf("%d endpoints: %v", MaxEndpoints, err)
	}
	if _, err := ParseConfig(many(MaxEndpoints + 1)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d endpoints", MaxEndpoints)) {
		t.Errorf("%d endpoints: %v, want refused", MaxEndpoints+1, err)
	}
	body := func(n int) []byte {
		return []byte(`{"endpoints": [{"id": "a", "url": "https://x.example/", "method": "POST", "body": "` +
			strings.Repeat("x", n) + `", "ops": ["lint"], "every": "1m"}]}`)
	}
	if _, err := ParseConfig(body(MaxBodyBytes)); err != nil {
		t.Errorf("body of %d bytes: %v", MaxBodyBytes, err)
	}
	if _, err := ParseConfig(body(MaxBodyBytes + 1)); err == nil {
		t.Errorf("body of %d bytes accepted", MaxBodyBytes+1)
	}
	big := append(many(1)[:0:0], many(1)...)
	big = append(big, make([]byte, MaxConfigBytes)...)
	if _, err := ParseConfig(big); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("file over the cap: %v", err)
	}
	id := strings.Repeat("a", 64)
	if _, err := ParseConfig([]byte(`{"endpoints": [{"id": "` + id + `", "url": "https://x.example/", "ops": ["check"], "every": "1m"}]}`)); err != nil {
		t.Errorf("64-character id: %v", err)
	}
	if _, err := ParseConfig([]byte(`{"endpoints": [{"id": "` + id + `a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}]}`)); err == nil {
		t.Error("65-character id accepted")
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1s": time.Second, "10m": 10 * time.Minute, "1h30m": 90 * time.Minute, "30d": 720 * time.Hour, "1d": 24 * time.Hour,
		"0s": 0, "-1m": 0, "0d": 0, "+1d": 0, "d": 0, "1.5d": 0, "x": 0, "": 0,
	} {
		got, ok := ParseDuration(in)
		if got != want || ok != (want > 0) {
			t.Errorf("ParseDuration(%q) = %s, %v; want %s", in, got, ok, want)
		}
	}
}

func mustParse(t *testing.T, path string) *Config {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ReadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConfigEdges: every and retention at their maxima are accepted, one
// step beyond refused (the files in testdata/bad); the freshness window of
// an interval beyond the maximum (an Endpoint built in code) is capped, so
// 2 × every never overflows.
func TestConfigEdges(t *testing.T) {
	doc := func(every, retention string) []byte {
		return []byte(`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "` + every + `"}], "retention": "` + retention + `"}`)
	}
	for _, tc := range []struct{ every, retention string }{{"30d", "3650d"}, {"720h", "87600h"}} {
		c, err := ParseConfig(doc(tc.every, tc.retention))
		if err != nil {
			t.Fatalf("every %s retention %s: %v", tc.every, tc.retention, err)
		}
		if c.Endpoints[0].Every != MaxEvery || c.Retention != MaxRetention {
			t.Errorf("every %s retention %s: got %s, %s", tc.every, tc.retention, c.Endpoints[0].Every, c.Retention)
		}
	}
	for _, tc := range []struct{ every, retention, reason string }{
		{"720h0m1s", "30d", "every: must be at most 30d"},
		{"2562047h", "30d", "every: must be at most 30d"}, // the largest Go duration
		{"1m", "87600h1s", "retention: must be at most 3650d"},
	} {
		if _, err := ParseConfig(doc(tc.every, tc.retention)); err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("every %s retention %s: %v, want %q", tc.every, tc.retention, err, tc.reason)
		}
	}
	now := time.Unix(1_700_000_000, 0)
	huge := Endpoint{Every: time.Duration(1<<63 - 1)}
	if !Fresh(huge, store.Observation{At: now.Add(-2*MaxEvery + time.Second)}, now) || Fresh(huge, store.Observation{At: now.Add(-2*MaxEvery - time.Second)}, now) {
		t.Error("an interval beyond MaxEvery is not capped at it")
	}
}

// TestDeepNestingIsRefusedInBoundedMemory: an 80 KB file nested 40,000
// levels deep (it once took 2.4 GB, the paths growing with each level) is
// refused at level 33, allocating a small multiple of its size.
func TestDeepNestingIsRefusedInBoundedMemory(t *testing.T) {
	const levels = 40_000
	for name, doc := range map[string][]byte{
		"arrays in a value":  []byte(`{"retention": ` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}`),
		"objects in a value": []byte(`{"endpoints": [{"id": ` + strings.Repeat(`{"a":`, levels/3) + `1` + strings.Repeat("}", levels/3) + `}]}`),
		"unclosed":           []byte(`{"endpoints": ` + strings.Repeat("[", 2*levels)),
	} {
		t.Run(name, func(t *testing.T) {
			if len(doc) < 80_000 {
				t.Fatalf("document of %d bytes, want 80 KB", len(doc))
			}
			var err error
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = ParseConfig(doc)
			runtime.ReadMemStats(&after)
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "nested deeper than 32 levels") {
				t.Fatalf("err = %v, want nested deeper than 32 levels", err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("allocated %d bytes refusing a %d-byte file; want at most 1 MiB", got, len(doc))
			}
			if strings.Count(ce.Field, "[") > MaxDepth || len(ce.Field) > 32*8 {
				t.Errorf("field path %q is longer than the depth allows", ce.Field)
			}
		})
	}
}
