package reliability

import (
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/exchangerebel/payability/internal/target"
)

// InputError is a refusal of the command's own input, before any request. Its
// message is a fixed sentence: it never echoes what was given.
type InputError struct{ Rule string }

// Input refusal rules, besides the target-URL policy's own (target.Rule*).
const (
	RuleNotHTTPS     = "url_not_https"
	RuleServiceID    = "service_id_not_token"
	RuleAPIScheme    = "api_scheme"
	RuleAPIExtra     = "api_query_or_fragment"
	RuleAPIUnchecked = "api_url"
)

var inputSentences = map[string]string{
	RuleNotHTTPS:     "the intended URL is not https",
	RuleServiceID:    "the service id is not a plain token (a letter or digit, then up to 127 letters, digits, '.', '_' or '-')",
	RuleAPIScheme:    "the API base URL must be https (http only with --allow-private)",
	RuleAPIExtra:     "the API base URL must not carry a query or fragment",
	RuleAPIUnchecked: "the API base URL is refused by the target-URL policy",
}

func (e *InputError) Error() string {
	if s, ok := inputSentences[e.Rule]; ok {
		return "refused (" + e.Rule + "): " + s
	}
	return (&target.PolicyError{Rule: e.Rule}).Error()
}

func refuse(rule string) error { return &InputError{Rule: rule} }

// policyRule turns a target-URL policy refusal into an InputError.
func policyRule(err error) error {
	var pe *target.PolicyError
	if errors.As(err, &pe) {
		return refuse(pe.Rule)
	}
	return refuse(target.RuleUnparseable)
}

// Normalize returns the normalized form of an intended URL, as the skill
// defines it: lowercase scheme and host, no trailing slash, an explicit port
// only when it is not 443. The URL must pass the target-URL policy and be
// https. The query is kept as given; a fragment, never sent, is dropped.
func Normalize(intended string) (string, error) {
	if err := target.CheckURL(intended); err != nil {
		return "", policyRule(err)
	}
	u, err := url.Parse(intended)
	if err != nil {
		return "", refuse(target.RuleUnparseable)
	}
	if u.Scheme != "https" { // url.Parse lower-cases the scheme
		return "", refuse(RuleNotHTTPS)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); p != "" {
		host = strings.TrimSuffix(host, ":"+p)
		// The policy admitted only 1..65535, so this parses; "0443" is 443.
		if n, _ := strconv.Atoi(p); n != 443 {
			host += ":" + strconv.Itoa(n)
		}
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	out := "https://" + host + path
	if u.RawQuery != "" || u.ForceQuery {
		out += "?" + u.RawQuery
	}
	return out, nil
}

var serviceIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`) }) // compiled on first use, not at start-up

// ValidServiceID reports whether id is a plain token that may name a record.
func ValidServiceID(id string) bool { return serviceIDPattern().MatchString(id) }

// DefaultAPI is the public CORTX API.
const DefaultAPI = "https://usecortx.dev"

// RecordURL is the address of a service's record under an API base URL. The
// base must be https, or http when allowHTTP (a local or staging API); the
// service id must be a plain token and is path-escaped.
func RecordURL(api, serviceID string, allowHTTP bool) (string, error) {
	if !ValidServiceID(serviceID) {
		return "", refuse(RuleServiceID)
	}
	if err := target.CheckURL(api); err != nil {
		return "", refuse(RuleAPIUnchecked)
	}
	u, err := url.Parse(api)
	if err != nil {
		return "", refuse(RuleAPIUnchecked)
	}
	if u.Scheme != "https" && !(allowHTTP && u.Scheme == "http") {
		return "", refuse(RuleAPIScheme)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(api, "#") {
		return "", refuse(RuleAPIExtra)
	}
	base := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	return base + "/api/v1/reliability/" + url.PathEscape(serviceID), nil
}
