// Package monitor is payability's verdicts over time: the configuration of
// the monitored endpoints, the observation an op makes of one of them, and
// the pure rules that turn observations into an outcome and a status. The
// scheduling (internal/schedule), the history (internal/store) and the HTTP
// surfaces (internal/monitorhttp) are around it.
package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

// Limits of a configuration, each enforced by Parse.
const (
	// MaxConfigBytes and MaxEndpoints fit a directory's 100,000
	// endpoints (docs/monitor.md, "Running a directory").
	MaxConfigBytes = 32 << 20
	MaxEndpoints   = 100000
	MaxWebhooks    = 32
	MaxBodyBytes   = 65536
	MinEvery       = time.Second
	// MaxEvery is the longest interval: 30 days (so that the two intervals
	// of freshness never overflow a time.Duration).
	MaxEvery     = 30 * 24 * time.Hour
	MinRetention = time.Hour
	// MaxRetention is the longest retention: 3650 days.
	MaxRetention = 3650 * 24 * time.Hour
	// MaxDepth is how deeply objects and arrays may nest (the file needs 4).
	MaxDepth = 32
	// DefaultRetention is how long the history is kept when the
	// configuration does not say: 30 days.
	DefaultRetention = 30 * 24 * time.Hour
	// MaxSources bounds the catalogs a configuration imports from.
	MaxSources = 32
	// MinSourceEvery is the shortest refresh of a catalog.
	MinSourceEvery = time.Minute
	// DefaultSourceEvery is a catalog's refresh when the source does not
	// say, and DefaultCheckEvery its endpoints' interval.
	DefaultSourceEvery = time.Hour
	DefaultCheckEvery  = time.Hour
	// DefaultRetireAfter is how long an imported endpoint stays once no
	// source lists it (retire_after): 7 days.
	DefaultRetireAfter = 7 * 24 * time.Hour
)

// DefaultImportOps are the ops an imported endpoint is observed by when the
// source does not say.
var DefaultImportOps = []string{"preflight"}

// EventOutcomeChanged is the one webhook event type.
const EventOutcomeChanged = "outcome_changed"

// Config is a validated monitor configuration.
type Config struct {
	Endpoints []Endpoint
	Webhooks  []Webhook
	Retention time.Duration
	// Sources are the catalogs imported on their schedule; RetireAfter is
	// how long an endpoint no source lists any more stays active.
	Sources     []Source
	RetireAfter time.Duration
	// Alert is the global alert policy; each endpoint's Alert is it, or
	// the endpoint's own keys.
	Alert AlertPolicy
}

// Source is one discovery catalog the monitor imports endpoints from.
type Source struct {
	URL   string
	Kind  string        // KindBazaar, KindWellKnown or KindList
	Every time.Duration // how often it is read
	// Ops and CheckEvery are the imported endpoints' ops and interval.
	Ops        []string
	CheckEvery time.Duration
}

// Endpoint is one monitored endpoint. ID is the only label that is ever
// public (metrics, URLs of the API, the page, badges, webhooks).
type Endpoint struct {
	ID     string
	URL    string
	Method string // GET (default) or POST
	Body   string // with POST
	Ops    []string
	Every  time.Duration
	// Network, when set, is the protocol identifier (e.g. a CAIP-2 chain
	// id) the endpoint is expected to be paid on.
	Network string
	// MaxAmount, when set, is the most the endpoint may ask, in the
	// asset's atomic units (a decimal integer).
	MaxAmount string
	// Read from the store: which sources list the endpoint (config, api,
	// or catalogs' URLs), and when it was retired (zero: it is checked).
	Sources []string
	Retired time.Time
	// Alert is the webhooks' alert policy of the endpoint's ops (alert.go).
	Alert AlertPolicy
}

// Has reports whether the endpoint is observed by op.
func (e Endpoint) Has(op string) bool { return slices.Contains(e.Ops, op) }

// Webhook is one receiver of signed events. Its identity is its ID and URL
// together: a pending delivery goes to the receiver with the same two, or is
// dropped.
type Webhook struct {
	ID        string // optional; its label in metrics
	URL       string
	SecretEnv string // the environment variable holding the HMAC secret
	Events    []string
	// Format is the payload's shape: json (the signed event, the default),
	// slack or discord (webhook.Formats).
	Format string
}

// Endpoint returns the endpoint with id.
func (c *Config) Endpoint(id string) (Endpoint, bool) {
	for _, e := range c.Endpoints {
		if e.ID == id {
			return e, true
		}
	}
	return Endpoint{}, false
}

// ConfigError is a configuration refused: the field path (endpoints[2].every),
// the 1-based line and column where it is (0 when not known) and a static
// reason. It never quotes the file's values.
type ConfigError struct {
	Field        string
	Line, Column int
	Reason       string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config")
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Reason)
	return b.String()
}

// The keys each object of the file allows.
var (
	topKeys      = []string{"endpoints", "webhooks", "retention", "sources", "retire_after", "failures_before_alert", "successes_before_resolve"}
	sourceKeys   = []string{"url", "kind", "every", "ops", "check_every"}
	endpointKeys = []string{"id", "url", "method", "body", "ops", "every", "network", "max_amount", "failures_before_alert", "successes_before_resolve"}
	webhookKeys  = []string{"id", "url", "secret_env", "events", "format"}
)

type rawConfig struct {
	Endpoints []rawEndpoint `json:"endpoints"`
	Webhooks  []rawWebhook  `json:"webhooks"`
	Retention *string       `json:"retention"`
	Sources   []rawSource   `json:"sources"`
	Retire    *string       `json:"retire_after"`
	rawAlert
}

type rawSource struct {
	URL        string   `json:"url"`
	Kind       string   `json:"kind"`
	Every      string   `json:"every"`
	Ops        []string `json:"ops"`
	CheckEvery string   `json:"check_every"`
}

// rawAlert is the alert policy's keys, globally and per endpoint.
type rawAlert struct {
	FailuresBeforeAlert    *int `json:"failures_before_alert"`
	SuccessesBeforeResolve *int `json:"successes_before_resolve"`
}

type rawEndpoint struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Method    string   `json:"method"`
	Body      *string  `json:"body"`
	Ops       []string `json:"ops"`
	Every     string   `json:"every"`
	Network   string   `json:"network"`
	MaxAmount string   `json:"max_amount"`
	rawAlert
}

type rawWebhook struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	SecretEnv string   `json:"secret_env"`
	Events    []string `json:"events"`
	Format    string   `json:"format"`
}

// ReadConfig reads and parses a configuration of at most MaxConfigBytes.
func ReadConfig(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	return ParseConfig(data)
}

// ParseConfig parses a JSON configuration strictly: unknown and repeated
// keys are refused, every value is validated, and an error names the field
// and its line.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, &ConfigError{Reason: fmt.Sprintf("file is over %d bytes", MaxConfigBytes)}
	}
	pos, err := scanKeys(data)
	if err != nil {
		return nil, err
	}
	var raw rawConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The value that failed is the last one starting before the
			// decoder's offset; name it by its full path.
			field, at := te.Field, 0
			for p, off := range pos {
				if off < int(te.Offset) && off >= at {
					field, at = p, off
				}
			}
			line, col := lineCol(data, at)
			return nil, &ConfigError{Field: field, Line: line, Column: col, Reason: "wrong type (want " + typeWord(te.Type.Kind().String()) + ")"}
		}
		return nil, &ConfigError{Reason: "not a valid configuration document"}
	}
	v := validator{pos: pos, data: data}
	return v.config(raw)
}

type validator struct {
	pos  map[string]int // field path → offset of its value
	data []byte
}

func (v validator) fail(field, reason string) error {
	e := &ConfigError{Field: field, Reason: reason}
	off, ok := v.pos[field]
	if !ok { // a missing field: point at the object that lacks it
		if i := strings.LastIndexByte(field, '.'); i > 0 {
			off, ok = v.pos[field[:i]]
		}
	}
	if ok {
		e.Line, e.Column = lineCol(v.data, off)
	}
	return e
}

func (v validator) config(raw rawConfig) (*Config, error) {
	c := &Config{Retention: DefaultRetention, RetireAfter: DefaultRetireAfter,
		Alert: AlertPolicy{FailuresBeforeAlert: DefaultFailuresBeforeAlert, SuccessesBeforeResolve: DefaultSuccessesBeforeResolve}}
	var err error
	if c.Alert, err = v.alert("", raw.rawAlert, c.Alert); err != nil {
		return nil, err
	}
	if len(raw.Endpoints) == 0 && len(raw.Sources) == 0 {
		return nil, v.fail("endpoints", "at least one endpoint or source is required")
	}
	if len(raw.Endpoints) > MaxEndpoints {
		return nil, v.fail("endpoints", fmt.Sprintf("at most %d endpoints", MaxEndpoints))
	}
	seen := map[string]bool{}
	for i, re := range raw.Endpoints {
		e, err := v.endpoint(fmt.Sprintf("endpoints[%d]", i), re)
		if err != nil {
			return nil, err
		}
		if e.Alert, err = v.alert(fmt.Sprintf("endpoints[%d].", i), re.rawAlert, c.Alert); err != nil {
			return nil, err
		}
		if seen[e.ID] {
			return nil, v.fail(fmt.Sprintf("endpoints[%d].id", i), "repeats an earlier endpoint's id")
		}
		seen[e.ID] = true
		c.Endpoints = append(c.Endpoints, e)
	}
	if len(raw.Webhooks) > MaxWebhooks {
		return nil, v.fail("webhooks", fmt.Sprintf("at most %d webhooks", MaxWebhooks))
	}
	for i, rw := range raw.Webhooks {
		w, err := v.webhook(fmt.Sprintf("webhooks[%d]", i), rw)
		if err != nil {
			return nil, err
		}
		for _, earlier := range c.Webhooks {
			if earlier.ID == w.ID && earlier.URL == w.URL {
				return nil, v.fail(fmt.Sprintf("webhooks[%d]", i), "repeats an earlier webhook's id and url")
			}
		}
		c.Webhooks = append(c.Webhooks, w)
	}
	if raw.Retention != nil {
		d, ok := ParseDuration(*raw.Retention)
		if !ok {
			return nil, v.fail("retention", "want a duration such as 30d, 720h or 90m")
		}
		if d < MinRetention {
			return nil, v.fail("retention", "must be at least 1h")
		}
		if d > MaxRetention {
			return nil, v.fail("retention", "must be at most 3650d")
		}
		c.Retention = d
	}
	if len(raw.Sources) > MaxSources {
		return nil, v.fail("sources", fmt.Sprintf("at most %d sources", MaxSources))
	}
	for i, rs := range raw.Sources {
		src, err := v.source(fmt.Sprintf("sources[%d]", i), rs)
		if err != nil {
			return nil, err
		}
		for _, earlier := range c.Sources {
			if earlier.URL == src.URL {
				return nil, v.fail(fmt.Sprintf("sources[%d].url", i), "repeats an earlier source's url")
			}
		}
		c.Sources = append(c.Sources, src)
	}
	if raw.Retire != nil {
		d, ok := ParseDuration(*raw.Retire)
		if !ok {
			return nil, v.fail("retire_after", "want a duration such as 7d or 72h")
		}
		if d < MinRetention || d > MaxRetention {
			return nil, v.fail("retire_after", "must be between 1h and 3650d")
		}
		c.RetireAfter = d
	}
	return c, nil
}

func (v validator) source(at string, rs rawSource) (Source, error) {
	s := Source{URL: rs.URL, Kind: rs.Kind, Every: DefaultSourceEvery, Ops: slices.Clone(DefaultImportOps), CheckEvery: DefaultCheckEvery}
	if rs.URL == "" {
		return s, v.fail(at+".url", "is required")
	}
	if err := target.CheckURL(rs.URL); err != nil {
		return s, v.fail(at+".url", "refused by the URL policy")
	}
	if !validKind(rs.Kind) {
		return s, v.fail(at+".kind", "want bazaar, wellknown or list")
	}
	if rs.Every != "" {
		d, ok := ParseDuration(rs.Every)
		if !ok || d < MinSourceEvery || d > MaxEvery {
			return s, v.fail(at+".every", "want a duration from 1m to 30d")
		}
		s.Every = d
	}
	if rs.Ops != nil {
		if err := checkOps(rs.Ops); err != "" {
			return s, v.fail(at+".ops", err)
		}
		s.Ops = slices.Clone(rs.Ops)
	}
	if rs.CheckEvery != "" {
		d, ok := ParseDuration(rs.CheckEvery)
		if !ok || d < MinEvery || d > MaxEvery {
			return s, v.fail(at+".check_every", "want a duration from 1s to 30d")
		}
		s.CheckEvery = d
	}
	return s, nil
}

// checkOps returns why a list of ops is refused ("" when it is not).
func checkOps(ops []string) string {
	if len(ops) == 0 {
		return "at least one op is required"
	}
	for j, op := range ops {
		if !store.ValidMonitorOp(op) {
			return "want preflight, lint, check, memo or probe"
		}
		if slices.Contains(ops[:j], op) {
			return "repeats an op"
		}
	}
	return ""
}

func (v validator) endpoint(at string, re rawEndpoint) (Endpoint, error) {
	e := Endpoint{ID: re.ID, URL: re.URL, Method: re.Method, Network: re.Network, MaxAmount: re.MaxAmount}
	if !store.ValidID(re.ID) {
		return e, v.fail(at+".id", "want 1 to 64 of a-z, 0-9, '-', '_', '.', starting with a letter or digit")
	}
	if re.URL == "" {
		return e, v.fail(at+".url", "is required")
	}
	if err := target.CheckURL(re.URL); err != nil {
		var pe *target.PolicyError
		if errors.As(err, &pe) {
			return e, v.fail(at+".url", "refused by the URL policy (rule "+pe.Rule+")")
		}
		return e, v.fail(at+".url", "refused by the URL policy")
	}
	switch re.Method {
	case "":
		e.Method = "GET"
	case "GET", "POST":
	default:
		return e, v.fail(at+".method", "want GET or POST")
	}
	if re.Body != nil {
		if e.Method != "POST" {
			return e, v.fail(at+".body", "a body needs method POST")
		}
		if len(*re.Body) > MaxBodyBytes {
			return e, v.fail(at+".body", fmt.Sprintf("at most %d bytes", MaxBodyBytes))
		}
		e.Body = *re.Body
	}
	if len(re.Ops) == 0 {
		return e, v.fail(at+".ops", "at least one op is required")
	}
	for j, op := range re.Ops {
		if !store.ValidMonitorOp(op) {
			return e, v.fail(fmt.Sprintf("%s.ops[%d]", at, j), "want preflight, lint, check, memo or probe")
		}
		if slices.Contains(re.Ops[:j], op) {
			return e, v.fail(fmt.Sprintf("%s.ops[%d]", at, j), "repeats an earlier op")
		}
	}
	e.Ops = slices.Clone(re.Ops)
	if re.Every == "" {
		return e, v.fail(at+".every", "is required (e.g. 10m)")
	}
	d, ok := ParseDuration(re.Every)
	if !ok {
		return e, v.fail(at+".every", "want a duration such as 10m, 30s or 1h")
	}
	if d < MinEvery {
		return e, v.fail(at+".every", "must be at least 1s")
	}
	if d > MaxEvery {
		return e, v.fail(at+".every", "must be at most 30d")
	}
	e.Every = d
	if re.Network != "" && !lint.IsCAIP2(re.Network) {
		return e, v.fail(at+".network", "want a CAIP-2 network id (e.g. eip155:8453 or solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp)")
	}
	if re.MaxAmount != "" && !validAmount(re.MaxAmount) {
		return e, v.fail(at+".max_amount", "want a decimal integer in the asset's atomic units")
	}
	return e, nil
}

func (v validator) webhook(at string, rw rawWebhook) (Webhook, error) {
	w := Webhook{ID: rw.ID, URL: rw.URL, SecretEnv: rw.SecretEnv}
	if rw.ID != "" && !store.ValidID(rw.ID) {
		return w, v.fail(at+".id", "want 1 to 64 of a-z, 0-9, '-', '_', '.', starting with a letter or digit")
	}
	if rw.URL == "" {
		return w, v.fail(at+".url", "is required")
	}
	if err := target.CheckURL(rw.URL); err != nil {
		return w, v.fail(at+".url", "refused by the URL policy")
	}
	if !validEnvName(rw.SecretEnv) {
		return w, v.fail(at+".secret_env", "want an environment variable name (A-Z, 0-9, _)")
	}
	if len(rw.Events) == 0 {
		return w, v.fail(at+".events", "at least one event is required")
	}
	for j, ev := range rw.Events {
		if ev != EventOutcomeChanged {
			return w, v.fail(fmt.Sprintf("%s.events[%d]", at, j), "want outcome_changed")
		}
	}
	w.Events = slices.Compact(slices.Clone(rw.Events))
	switch rw.Format {
	case "":
		w.Format = WebhookJSON
	case WebhookJSON, WebhookSlack, WebhookDiscord:
		w.Format = rw.Format
	default:
		return w, v.fail(at+".format", "want json, slack or discord")
	}
	return w, nil
}

// Webhook payload formats.
const (
	WebhookJSON    = "json"
	WebhookSlack   = "slack"
	WebhookDiscord = "discord"
)

// alert reads the policy keys at prefix (the top level, or an endpoint's),
// each 1 to MaxAlertRun; a key not given keeps def's value.
func (v validator) alert(prefix string, ra rawAlert, def AlertPolicy) (AlertPolicy, error) {
	p := def
	for _, k := range []struct {
		name string
		val  *int
		dst  *int
	}{
		{"failures_before_alert", ra.FailuresBeforeAlert, &p.FailuresBeforeAlert},
		{"successes_before_resolve", ra.SuccessesBeforeResolve, &p.SuccessesBeforeResolve},
	} {
		if k.val == nil {
			continue
		}
		if *k.val < 1 || *k.val > MaxAlertRun {
			return p, v.fail(prefix+k.name, fmt.Sprintf("want a whole number from 1 to %d", MaxAlertRun))
		}
		*k.dst = *k.val
	}
	return p, nil
}

// ParseDuration reads a Go duration (90s, 10m, 1h30m) or a whole number of
// days (30d). It refuses negative and zero durations.
func ParseDuration(s string) (time.Duration, bool) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 1 || days > 3650 || n[0] == '+' {
			return 0, false
		}
		return time.Duration(days) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}

func validAmount(s string) bool {
	if len(s) > 78 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validEnvName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func typeWord(kind string) string {
	switch kind {
	case "slice":
		return "an array"
	case "struct":
		return "an object"
	case "string", "ptr":
		return "a string"
	}
	return kind
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
