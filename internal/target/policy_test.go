package target

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func urlOfLength(n int) string {
	const prefix = "https://example.com/"
	return prefix + strings.Repeat("a", n-len(prefix))
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string // "" means accepted
	}{
		{"plain https", "https://seller.example/api/paid", ""},
		{"plain http", "http://seller.example/", ""},
		{"upper-case scheme", "HTTPS://seller.example/", ""},
		{"mixed-case scheme", "HtTp://seller.example/", ""},
		{"query and fragment", "https://seller.example/p?a=1&b=2#frag", ""},
		{"at sign in query is not userinfo", "https://seller.example/p?who=a@b", ""},
		{"at sign in path is not userinfo", "https://seller.example/a@b", ""},
		{"exactly 2048 bytes", urlOfLength(2048), ""},
		{"2049 bytes", urlOfLength(2049), RuleTooLong},
		{"far too long", urlOfLength(10000), RuleTooLong},
		{"too long wins over everything", "ftp://u@" + strings.Repeat("h", 3000), RuleTooLong},

		{"empty", "", RuleNotAbsolute},
		{"relative path", "/api/paid", RuleNotAbsolute},
		{"bare word", "seller.example", RuleNotAbsolute},
		{"scheme-relative", "//seller.example/api", RuleNotAbsolute},
		{"scheme-relative bad port", "//seller.example:x/api", RuleNotAbsolute},

		{"ftp", "ftp://seller.example/", RuleScheme},
		{"file", "file:///etc/passwd", RuleScheme},
		{"javascript", "javascript:alert(1)", RuleScheme},
		{"ws", "ws://seller.example/", RuleScheme},
		{"gopher with bad port", "gopher://seller.example:x/", RuleScheme},
		{"mailto", "mailto:a@b.example", RuleScheme},

		{"userinfo user and password", "https://user:pass@seller.example/", RuleUserinfo},
		{"userinfo user only", "https://user@seller.example/", RuleUserinfo},
		{"userinfo empty at", "https://@seller.example/", RuleUserinfo},
		{"userinfo colon only", "https://:@seller.example/", RuleUserinfo},
		{"userinfo with bad port", "https://u@seller.example:x/", RuleUserinfo},
		{"userinfo without host", "https://@/", RuleUserinfo},

		{"no host", "https:///path", RuleHostEmpty},
		{"only a port", "https://:8080/", RuleHostEmpty},
		{"opaque", "http:seller.example", RuleHostEmpty},
		{"single slash", "http:/seller.example", RuleHostEmpty},
		{"scheme only", "https:", RuleHostEmpty},

		{"port 1", "http://seller.example:1/", ""},
		{"port 80", "http://seller.example:80/", ""},
		{"port 65535", "http://seller.example:65535/", ""},
		{"port with leading zeros", "http://seller.example:00080/", ""},
		{"port 0", "http://seller.example:0/", RulePort},
		{"port 00", "http://seller.example:00/", RulePort},
		{"port 65536", "http://seller.example:65536/", RulePort},
		{"port huge", "http://seller.example:99999999999999999999999/", RulePort},
		{"port empty", "http://seller.example:/", RulePort},
		{"port empty no path", "http://seller.example:", RulePort},
		{"port non-numeric", "http://seller.example:abc/", RulePort},
		{"port signed", "http://seller.example:+80/", RulePort},
		{"port negative", "http://seller.example:-1/", RulePort},
		{"port two colons", "http://seller.example:80:80/", RulePort},
		{"port non-ASCII digit", "http://seller.example:\u0663/", RulePort},

		{"IPv6 literal", "http://[2606:4700::1111]/", ""},
		{"IPv6 literal with port", "https://[2606:4700::1111]:8443/x", ""},
		{"IPv6 loopback literal passes policy", "http://[::1]:8080/", ""},
		{"IPv6 empty port", "http://[2606:4700::1111]:/", RulePort},
		{"IPv6 port 0", "http://[2606:4700::1111]:0/", RulePort},
		{"IPv6 port 65536", "http://[2606:4700::1111]:65536/", RulePort},
		{"IPv6 junk after bracket", "http://[2606:4700::1111]x/", RulePort},
		{"IPv6 unbracketed", "http://2606:4700::1111/", RulePort},
		{"IPv6 missing bracket", "http://[2606:4700::1111/", RuleUnparseable},
		{"IPv6 empty brackets", "http://[]/", RuleUnparseable},
		{"IPv4 literal", "http://203.0.113.9:8080/", ""},

		{"space in host", "http://sell er.example/", RuleUnparseable},
		{"backslash in host", "http://seller.example\\evil/", RuleUnparseable},
		{"control character", "http://seller.example/\x7f", RuleUnparseable},
		{"newline", "http://seller.example/\nx", RuleUnparseable},
		{"bad escape", "http://seller.example/%zz", RuleUnparseable},
		{"leading space", " http://seller.example/", RuleUnparseable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckURL(tt.raw)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckURL refused with %v, want accepted", err)
				}
				return
			}
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("CheckURL = %v, want *PolicyError %s", err, tt.want)
			}
			if got := pe.Rule; got != tt.want {
				t.Fatalf("rule = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPolicyErrorIsStaticAndNamesTheRule(t *testing.T) {
	seen := map[string]bool{}
	for _, rule := range Rules() {
		msg := (&PolicyError{Rule: rule}).Error()
		if !strings.Contains(msg, rule) {
			t.Errorf("message for %s does not name the rule: %q", rule, msg)
		}
		if seen[msg] {
			t.Errorf("message for %s is not distinct: %q", rule, msg)
		}
		seen[msg] = true
	}
	const canary = "https://canary-7f3a.example:bad/secret-path"
	err := CheckURL(canary)
	if err == nil {
		t.Fatal("canary URL accepted")
	}
	for _, part := range []string{"canary-7f3a", "secret-path", "bad"} {
		if strings.Contains(err.Error(), part) {
			t.Errorf("refusal %q echoes the URL fragment %q", err, part)
		}
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://seller.example/api/paid", "http://[::1]:8080/", "https://@h/", "http://h:/",
		"http://h:65536/", "ftp://h/", "//h/x", "http:h", "http://h:0", urlOfLength(2048),
		"http://[fe80::1%25en0]/", "HTTP://H:1/", "http://h?x@y", "http://u:p@h:x/",
	} {
		f.Add(s)
	}
	rules := map[string]bool{}
	for _, r := range Rules() {
		rules[r] = true
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckURL(raw)
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) || !rules[pe.Rule] {
				t.Fatalf("refusal outside the closed set: %#v", err)
			}
			if err.Error() != ruleSentences[pe.Rule] {
				t.Fatalf("refusal message is not the static sentence: %q", err)
			}
			return
		}
		if len(raw) > MaxURLBytes {
			t.Fatalf("accepted %d bytes", len(raw))
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("accepted an unparseable URL: %v", perr)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if u.User != nil {
			t.Fatal("accepted userinfo")
		}
		if u.Opaque != "" || u.Hostname() == "" {
			t.Fatal("accepted an empty host")
		}
		if strings.HasSuffix(u.Host, ":") {
			t.Fatal("accepted an empty port")
		}
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted port %q", p)
			}
		}
	})
}
