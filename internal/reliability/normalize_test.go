package reliability

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
		rule     string
	}{
		{"https://seller.example/api/paid", "https://seller.example/api/paid", ""},
		{"HTTPS://Seller.EXAMPLE/api/paid", "https://seller.example/api/paid", ""},
		{"https://seller.example/api/paid/", "https://seller.example/api/paid", ""},
		{"https://seller.example/api/paid//", "https://seller.example/api/paid", ""},
		{"https://seller.example/", "https://seller.example", ""},
		{"https://seller.example", "https://seller.example", ""},
		{"https://seller.example:443/api", "https://seller.example/api", ""},
		{"https://seller.example:8443/api", "https://seller.example:8443/api", ""},
		{"https://seller.example:08443/api", "https://seller.example:8443/api", ""},
		{"https://seller.example/API/Paid", "https://seller.example/API/Paid", ""}, // the path keeps its case
		{"https://seller.example/x/?q=1", "https://seller.example/x?q=1", ""},
		{"https://seller.example/x#frag", "https://seller.example/x", ""},
		{"https://[2001:DB8::1]:443/a/", "https://[2001:db8::1]/a", ""},
		{"https://[::1]:8443/a", "https://[::1]:8443/a", ""},
		{"https://seller.example/a%20b", "https://seller.example/a%20b", ""},
		{"http://seller.example/api/paid", "", RuleNotHTTPS},
		{"ftp://seller.example/", "", "url_scheme"},
		{"https://user:pw@seller.example/", "", "url_userinfo"},
		{"/api/paid", "", "url_not_absolute"},
		{"https://seller.example:0/", "", "url_port"},
		{"https://seller.example/" + strings.Repeat("a", 2048), "", "url_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.in[:min(len(tt.in), 60)], func(t *testing.T) {
			got, err := Normalize(tt.in)
			if tt.rule != "" {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Rule != tt.rule {
					t.Fatalf("err = %v, want rule %s", err, tt.rule)
				}
				if strings.Contains(err.Error(), "seller.example") {
					t.Errorf("refusal echoes the URL: %q", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Normalize = %q, %v; want %q", got, err, tt.want)
			}
			again, err := Normalize(got)
			if err != nil || again != got {
				t.Errorf("not idempotent: %q -> %q (%v)", got, again, err)
			}
		})
	}
}

func TestValidServiceID(t *testing.T) {
	good := []string{"acme-weather", "svc_01.v2", "a", "7", strings.Repeat("a", 128)}
	bad := []string{"", ".hidden", "-x", "_x", "a/b", "..", "a b", "a%2f", "café", "a\n", "a?b", "a#b",
		strings.Repeat("a", 129), "../../admin"}
	for _, id := range good {
		if !ValidServiceID(id) {
			t.Errorf("ValidServiceID(%q) = false", id)
		}
	}
	for _, id := range bad {
		if ValidServiceID(id) {
			t.Errorf("ValidServiceID(%q) = true", id)
		}
	}
}

func TestRecordURL(t *testing.T) {
	tests := []struct {
		api, id   string
		allowHTTP bool
		want      string
		rule      string
	}{
		{DefaultAPI, "acme-weather", false, "https://usecortx.dev/api/v1/reliability/acme-weather", ""},
		{"https://usecortx.dev/", "svc_01.v2", false, "https://usecortx.dev/api/v1/reliability/svc_01.v2", ""},
		{"https://cortx.example/mirror/", "a", false, "https://cortx.example/mirror/api/v1/reliability/a", ""},
		{"http://127.0.0.1:8080", "a", true, "http://127.0.0.1:8080/api/v1/reliability/a", ""},
		{"http://127.0.0.1:8080", "a", false, "", RuleAPIScheme},
		{"https://usecortx.dev?x=1", "a", false, "", RuleAPIExtra},
		{"https://usecortx.dev#x", "a", false, "", RuleAPIExtra},
		{"https://u@usecortx.dev", "a", false, "", RuleAPIUnchecked},
		{"ftp://usecortx.dev", "a", true, "", RuleAPIUnchecked},
		{DefaultAPI, "../admin", false, "", RuleServiceID},
		{DefaultAPI, "a/b", false, "", RuleServiceID},
		{DefaultAPI, "", false, "", RuleServiceID},
	}
	for _, tt := range tests {
		got, err := RecordURL(tt.api, tt.id, tt.allowHTTP)
		if tt.rule != "" {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Rule != tt.rule {
				t.Errorf("RecordURL(%q, %q) err = %v, want rule %s", tt.api, tt.id, err, tt.rule)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("RecordURL(%q, %q) = %q, %v; want %q", tt.api, tt.id, got, err, tt.want)
		}
	}
}
