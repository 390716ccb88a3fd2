package monitor

import (
	"errors"
	"testing"
)

func TestAlertPolicyConfig(t *testing.T) {
	const ep = `{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}`
	t.Run("defaults_are_2_and_2", func(t *testing.T) {
		c, err := ParseConfig([]byte(`{"endpoints": [` + ep + `], "webhooks": [{"url": "https://h.example/", "secret_env": "S", "events": ["outcome_changed"]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		want := AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}
		if c.Alert != want || c.Endpoints[0].Alert != want || c.Webhooks[0].Format != WebhookJSON {
			t.Errorf("alert %+v, endpoint %+v, format %q; want 2/2 and json", c.Alert, c.Endpoints[0].Alert, c.Webhooks[0].Format)
		}
	})
	t.Run("global_then_endpoint_override", func(t *testing.T) {
		c, err := ParseConfig([]byte(`{"failures_before_alert": 3, "successes_before_resolve": 1, "endpoints": [` + ep + `,
			{"id": "b", "url": "https://x.example/b", "ops": ["check"], "every": "1m", "failures_before_alert": 1}],
			"webhooks": [{"url": "https://h.example/", "secret_env": "S", "events": ["outcome_changed"], "format": "slack"},
			{"url": "https://d.example/", "secret_env": "S", "events": ["outcome_changed"], "format": "discord"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := c.Endpoints[0].Alert, c.Endpoints[1].Alert; a != (AlertPolicy{3, 1}) || b != (AlertPolicy{1, 1}) {
			t.Errorf("a %+v, b %+v; want 3/1 and 1/1", a, b)
		}
		if c.Webhooks[0].Format != WebhookSlack || c.Webhooks[1].Format != WebhookDiscord {
			t.Errorf("formats %q %q", c.Webhooks[0].Format, c.Webhooks[1].Format)
		}
	})
	for name, tc := range map[string]struct{ doc, field string }{
		"zero":          {`{"failures_before_alert": 0, "endpoints": [` + ep + `]}`, "failures_before_alert"},
		"over_100":      {`{"successes_before_resolve": 101, "endpoints": [` + ep + `]}`, "successes_before_resolve"},
		"endpoint_neg":  {`{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m", "successes_before_resolve": -1}]}`, "endpoints[0].successes_before_resolve"},
		"not_a_number":  {`{"failures_before_alert": "2", "endpoints": [` + ep + `]}`, "failures_before_alert"},
		"bad_format":    {`{"endpoints": [` + ep + `], "webhooks": [{"url": "https://h.example/", "secret_env": "S", "events": ["outcome_changed"], "format": "teams"}]}`, "webhooks[0].format"},
		"unknown_alert": {`{"failures_before_page": 2, "endpoints": [` + ep + `]}`, "failures_before_page"},
	} {
		t.Run("refused_"+name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.doc))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Errorf("err %v, want a ConfigError on %s", err, tc.field)
			}
		})
	}
	// 100 is the edge that is allowed.
	if _, err := ParseConfig([]byte(`{"failures_before_alert": 100, "successes_before_resolve": 100, "endpoints": [` + ep + `]}`)); err != nil {
		t.Errorf("100: %v", err)
	}
}
