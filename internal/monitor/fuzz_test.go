package monitor

import (
	"os"
	"testing"
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
		if len(c.Endpoints) == 0 {
			t.Fatal("valid config without endpoints")
		}
		for _, e := range c.Endpoints {
			if e.Alert.FailuresBeforeAlert < 1 || e.Alert.SuccessesBeforeResolve < 1 {
				t.Fatalf("valid config with an alert policy below 1: %+v", e.Alert)
			}
		}
	})
}
