package monitor

import (
	"os"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

// FuzzParseConfig: any input is either a valid configuration or a
// *ConfigError; never a panic.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("testdata/good.json"); err == nil {
		f.Add(b)
	}
	// The alert policy's keys and the webhook formats.
	f.Add([]byte(`{"failures_before_alert": 3, "endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m",
		"successes_before_resolve": 1}], "webhooks": [{"url": "https://h.example/", "secret_env": "S", "events": ["outcome_changed"], "format": "slack"}]}`))
	entries, _ := os.ReadDir("testdata/bad")
	for _, e := range entries {
		if b, err := os.ReadFile("testdata/bad/" + e.Name()); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if _, ok := err.(*ConfigError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(c.Endpoints) == 0 && len(c.Sources) == 0 {
			t.Fatal("valid config without endpoints or sources")
		}
		if c.Alert.FailuresBeforeAlert < 1 || c.Alert.SuccessesBeforeResolve < 1 {
			t.Fatalf("valid config with a global alert policy below 1: %+v", c.Alert)
		}
		for _, e := range c.Endpoints {
			if e.Alert.FailuresBeforeAlert < 1 || e.Alert.SuccessesBeforeResolve < 1 {
				t.Fatalf("valid config with an alert policy below 1: %+v", e.Alert)
			}
		}
	})
}

// checkRead: every entry a catalog parser keeps passes the URL policy and
// the guard, is GET or POST, and has a valid derived id; the counts add up.
func checkRead(t *testing.T, r CatalogRead, allowPrivate bool) {
	t.Helper()
	for _, e := range r.Entries {
		if target.CheckURL(e.URL) != nil || !GuardURL(e.URL, allowPrivate) || (e.Method != "GET" && e.Method != "POST") || !store.ValidID(e.ID()) {
			t.Fatalf("kept %+v", e)
		}
	}
	for k, n := range r.Skipped {
		if n < 1 || !strings.Contains(" url_policy address_guard method type route_template off_origin ", " "+k+" ") {
			t.Fatalf("skipped %q %d", k, n)
		}
	}
}

// FuzzParseBazaarPage: any page is refused with a *CatalogError or read
// into entries that pass the policy; never a panic.
func FuzzParseBazaarPage(f *testing.F) {
	for _, s := range []string{`{"items":[{"resource":"https://a.example/x","type":"http","accepts":[{"outputSchema":{"input":{"method":"post"}}}]}],"pagination":{"total":1}}`,
		`{"items":[{"resource":{"url":"http://10.0.0.1/"}},{"url":"https://b.example/:id"}]}`, `{"resources":[1,"x",null]}`, `[]`, `{"items":null}`,
		`{"items":[{"resource":"https://c.example/","extensions":{"bazaar":{"info":{"input":{"type":"mcp"}}}}}]}`} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, allowPrivate bool) {
		p, err := ParseBazaarPage(data, allowPrivate)
		if refused(t, err) {
			return
		}
		n := len(p.Entries)
		for _, c := range p.Skipped {
			n += c
		}
		if n != p.Items || p.Items > MaxPageItems || p.Total < -1 {
			t.Fatalf("%d entries+skipped of %d items, total %d", n, p.Items, p.Total)
		}
		checkRead(t, p.CatalogRead, allowPrivate)
	})
}

// FuzzParseWellKnown: as FuzzParseBazaarPage, and every entry kept is on
// the manifest's host or below it.
func FuzzParseWellKnown(f *testing.F) {
	for _, s := range []string{`{"resources":[{"url":"https://o.example/p","method":"POST"},"https://x.o.example/q","https://evil.example/"]}`,
		`{"items":[{"resource":{"url":"https://o.example/i"},"input":{"method":"GET"}}]}`, `{"resources":{}}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseWellKnown(data, "https://o.example/.well-known/x402", false)
		if refused(t, err) {
			return
		}
		checkRead(t, r, false)
		for _, e := range r.Entries {
			if !strings.HasPrefix(e.URL, "https://") {
				t.Fatalf("kept %s off https", e.URL)
			}
		}
	})
}

// FuzzParseList: any list is refused with a *CatalogError or read into
// entries that pass the policy; never a panic.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"https://a.example/x\n# c\n\nftp://b/\n", `["https://a.example/",{"url":"https://b.example/","method":"POST"},7]`, `[`, "\x00"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, allowPrivate bool) {
		r, err := ParseList(data, allowPrivate)
		if refused(t, err) {
			return
		}
		checkRead(t, r, allowPrivate)
	})
}

// FuzzParseEndpoints: any API body is refused with a *ConfigError or gives
// 1 to MaxBatch valid endpoints with distinct ids; never a panic.
func FuzzParseEndpoints(f *testing.F) {
	for _, s := range []string{`{"id":"a","url":"https://a.example/","ops":["lint"],"every":"1m"}`,
		`{"endpoints":[{"id":"a","url":"https://a.example/","ops":["lint"],"every":"1m"},{"id":"b","url":"https://b.example/","method":"POST","body":"{}","ops":["check"],"every":"1h"}]}`,
		`{"endpoints":[]}`, `{"id":"a","endpoints":[]}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		eps, err := ParseEndpoints(data)
		if err != nil {
			if _, ok := err.(*ConfigError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		seen := map[string]bool{}
		if len(eps) < 1 || len(eps) > MaxBatch {
			t.Fatalf("%d endpoints", len(eps))
		}
		for _, e := range eps {
			if seen[e.ID] || Record(e).Validate() != nil || target.CheckURL(e.URL) != nil {
				t.Fatalf("endpoint %+v", e)
			}
			seen[e.ID] = true
		}
	})
}

// refused reports whether a parser refused its input, failing the test
// when the error is not a *CatalogError.
func refused(t *testing.T, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	if _, ok := err.(*CatalogError); !ok {
		t.Fatalf("error of type %T", err)
	}
	return true
}
