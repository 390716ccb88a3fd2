// Package target is the only code that talks to targets. It validates a
// target URL against the published target-URL policy (free, before anything
// else), fetches under the published limits with an address guard applied at
// dial time, and returns what it observed as a capture.Capture: a broken
// target is data, never a Go error.
package target

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLBytes is the longest target URL the policy accepts, in bytes.
const MaxURLBytes = 2048

// The closed set of URL-policy rule codes a refusal can name.
const (
	RuleTooLong     = "url_too_long"
	RuleUnparseable = "url_unparseable"
	RuleNotAbsolute = "url_not_absolute"
	RuleScheme      = "url_scheme"
	RuleHostEmpty   = "url_host_empty"
	RuleUserinfo    = "url_userinfo"
	RulePort        = "url_port"
)

// Rules lists every rule code, in the order CheckURL applies them.
func Rules() []string {
	return []string{RuleTooLong, RuleUnparseable, RuleNotAbsolute, RuleScheme, RuleUserinfo, RuleHostEmpty, RulePort}
}

// ruleSentences are static on purpose: a refusal never echoes the URL.
var ruleSentences = map[string]string{
	RuleTooLong:     "target URL refused (url_too_long): the URL is longer than 2,048 bytes",
	RuleUnparseable: "target URL refused (url_unparseable): the URL does not parse",
	RuleNotAbsolute: "target URL refused (url_not_absolute): the URL is not absolute",
	RuleScheme:      "target URL refused (url_scheme): the scheme is not http or https",
	RuleHostEmpty:   "target URL refused (url_host_empty): the URL names no host",
	RuleUserinfo:    "target URL refused (url_userinfo): the URL carries credentials (userinfo)",
	RulePort:        "target URL refused (url_port): the port is not a number from 1 to 65535",
}

// PolicyError is a refusal by the target-URL policy. Rule is one of the Rule*
// codes; the message is a static sentence naming the rule.
type PolicyError struct{ Rule string }

func (e *PolicyError) Error() string {
	if s, ok := ruleSentences[e.Rule]; ok {
		return s
	}
	return "target URL refused"
}

func refuse(rule string) error { return &PolicyError{Rule: rule} }

// CheckURL applies the target-URL policy to a URL exactly as submitted. It
// returns nil when the URL may be fetched, or a *PolicyError naming the first
// rule it breaks. It never resolves or contacts anything.
func CheckURL(raw string) error {
	_, err := checkURL(raw)
	return err
}

// checkURL is CheckURL, also giving the parsed URL of an accepted one.
func checkURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLBytes {
		return nil, refuse(RuleTooLong)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refuse(classifyParseError(raw, err))
	}
	if u.Scheme == "" {
		return nil, refuse(RuleNotAbsolute)
	}
	if u.Scheme != "http" && u.Scheme != "https" { // url.Parse lower-cases the scheme
		return nil, refuse(RuleScheme)
	}
	if u.User != nil { // set even for an empty "@"
		return nil, refuse(RuleUserinfo)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, refuse(RuleHostEmpty)
	}
	if !validPort(u) {
		return nil, refuse(RulePort)
	}
	return u, nil
}

// validPort reports whether the URL's port is absent or a number in 1..65535.
// A ':' with nothing after it is refused: it names a port and gives none.
func validPort(u *url.URL) bool {
	if strings.HasSuffix(u.Host, ":") {
		return false
	}
	p := u.Port()
	if p == "" {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n >= 1
}

// classifyParseError names the rule for a URL that net/url refuses. net/url
// rejects a non-numeric port while parsing; that is a port refusal unless the
// scheme or userinfo rule, which come first, also applies.
func classifyParseError(raw string, err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) || !strings.HasPrefix(ue.Err.Error(), "invalid port") {
		return RuleUnparseable
	}
	i := strings.Index(raw, "://")
	if i <= 0 {
		return RuleNotAbsolute
	}
	if s := strings.ToLower(raw[:i]); s != "http" && s != "https" {
		return RuleScheme
	}
	authority := raw[i+3:]
	if j := strings.IndexAny(authority, "/?#"); j >= 0 {
		authority = authority[:j]
	}
	if strings.Contains(authority, "@") {
		return RuleUserinfo
	}
	return RulePort
}
