package ops

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/reliability"
	"github.com/exchangerebel/payability/internal/target"
)

// OpPreflight is the preflight op.
const OpPreflight = "preflight"

// DefaultPreflightBody is what every POST of a preflight carries unless the
// agent gives the body it is about to pay for.
const DefaultPreflightBody = "{}"

// PreflightRequest is one preflight: the resource, the gated method, the
// body, the agent's constraints and, optionally, a CORTX service id.
type PreflightRequest struct {
	URL     string
	Method  string // GET or POST; "" finds the gated method (GET, then POST)
	Body    []byte // nil means DefaultPreflightBody
	Options preflight.Options
	// ServiceID adds the CORTX reliability decision; "" skips it.
	ServiceID string
	// CORTXAPI is the CORTX API base URL ("" the default); CORTXAllowHTTP
	// lets it be plain http (a local or staging API).
	CORTXAPI       string
	CORTXAllowHTTP bool
	// Rand is where P1's fresh values are drawn from; nil is crypto/rand.
	// Tests pass a fixed stream.
	Rand io.Reader
}

// PreflightReport is the preflight record (docs/report-format.md).
type PreflightReport struct {
	Document  string     `json:"document"`
	Revision  string     `json:"revision"`
	Corpus    corpus.Ref `json:"corpus"`
	Tool      string     `json:"tool"`
	Version   string     `json:"version"`
	Op        string     `json:"op"`
	URL       string     `json:"url"`
	CheckedAt string     `json:"checked_at"`
	preflight.Result
	// Summary is the one sentence a person reads first.
	Summary         string `json:"summary"`
	NoFundsProperty string `json:"no_funds_property"`
}

// ExitCode is the CLI's exit status of a decision: 0 GO, 10 HOLD, 20 STOP.
func (r PreflightReport) ExitCode() int {
	switch r.Decision {
	case preflight.Go:
		return 0
	case preflight.Hold:
		return 10
	}
	return 20
}

// Preflight runs x402-preflight/v1 against req.URL: the lint fetch (and
// lint), the second fetch, the payment probes and the method matrix, each
// through the Fetcher's limits, then the optional CORTX check; then it
// decides. The only errors are a URL-policy refusal (*target.PolicyError)
// and a Fetcher that cannot send POST and HEAD (ErrNoRequester); a broken
// target, or a CORTX check that could not run, is a decision.
func (r Runner) Preflight(ctx context.Context, req PreflightRequest) (PreflightReport, error) {
	if err := target.CheckURL(req.URL); err != nil {
		return PreflightReport{}, err
	}
	// One connection scope for the whole preflight: its requests to the
	// seller reuse a connection where the seller allows it.
	r, done := r.Scoped(1)
	defer done()
	fetcher, ok := r.Fetcher.(Requester)
	if !ok {
		return PreflightReport{}, ErrNoRequester
	}
	body := req.Body
	if body == nil {
		body = []byte(DefaultPreflightBody)
	}
	unpaidRequest := func(method string) capture.Capture {
		tr := target.Request{Method: method, URL: req.URL, Header: map[string]string{}}
		if method == http.MethodPost {
			tr.Header["Content-Type"] = "application/json"
			tr.Body = body
		}
		return fetcher.Do(ctx, tr)
	}

	in := preflight.Input{Options: req.Options}
	if req.Method != "" {
		in.Lint = append(in.Lint, preflight.Fetch{Method: req.Method, Capture: unpaidRequest(req.Method)})
	} else {
		get := unpaidRequest(http.MethodGet)
		in.Lint = append(in.Lint, preflight.Fetch{Method: http.MethodGet, Capture: get})
		if !is402(get) {
			in.Lint = append(in.Lint, preflight.Fetch{Method: http.MethodPost, Capture: unpaidRequest(http.MethodPost)})
		}
	}
	unpaid, _ := in.Unpaid()
	if is402(unpaid.Capture) {
		lintFn := r.lint
		if lintFn == nil {
			lintFn = lint.Lint
		}
		in.LintResult = lintFn(lint.Input{URL: req.URL, Method: unpaid.Method, Capture: unpaid.Capture, Now: r.now()})
		second := unpaidRequest(unpaid.Method)
		in.Second = &second
		rnd := req.Rand
		if rnd == nil {
			rnd = rand.Reader
		}
		// P1's validity window is drawn around the time it is built.
		env := preflight.ProbeEnv{Now: r.now(), Rand: rnd}
		_, probes := preflight.Plan(unpaid.Capture, in.LintResult, req.Options, unpaid.Method, body, env)
		for _, p := range probes {
			c := fetcher.Do(ctx, target.Request{Method: p.Method, URL: req.URL, Header: p.Header, Body: p.Body})
			in.Answers = append(in.Answers, preflight.Answer{ID: p.ID, Dialect: p.Dialect, Method: p.Method, Capture: c})
		}
	}
	if req.ServiceID != "" {
		rc := reliability.Client{Fetcher: r.Fetcher, API: req.CORTXAPI, AllowHTTP: req.CORTXAllowHTTP, Now: r.Now}
		// A check refused before any request (the URL cannot be bound to a
		// record: CORTX binds https URLs only) did not run: cortx_unverified.
		in.CORTX = &preflight.CORTX{}
		if res, err := rc.Check(ctx, req.ServiceID, req.URL); err == nil {
			in.CORTX = &preflight.CORTX{Action: string(res.Decision.Action), Rule: string(res.Decision.Rule)}
		}
	}
	res := preflight.Evaluate(in)
	end := r.now()
	return NewPreflightReport(req.URL, end, res), nil
}

// NewPreflightReport wraps a result in the record's envelope.
func NewPreflightReport(url string, end time.Time, res preflight.Result) PreflightReport {
	at := criteria.Timestamp(end)
	return PreflightReport{
		Document:        preflight.DocumentID,
		Revision:        preflight.Revision,
		Corpus:          corpus.PreflightRef(),
		Tool:            "payability",
		Version:         buildinfo.Version,
		Op:              OpPreflight,
		URL:             url,
		CheckedAt:       at,
		Result:          res,
		Summary:         preflight.Summary(res, at),
		NoFundsProperty: preflight.NoFundsProperty(),
	}
}

func is402(c capture.Capture) bool { return c.Responded() && c.Status == http.StatusPaymentRequired }

// MaxPreflightBody bounds the body a preflight's POSTs carry.
const MaxPreflightBody = 262144

// PreflightArgs are a preflight's arguments as a person or an agent gives
// them: the CLI's flags and the MCP tool's input validate through here.
type PreflightArgs struct {
	URL, Method                       string
	Body                              []byte // nil: the default body
	Network, Scheme, Asset, MaxAmount string
	ServiceID                         string
}

// ArgError says which argument is wrong, in closed form.
type ArgError struct {
	Arg     string // the argument's name in the CLI's spelling: method, body, network, max-amount, service-id
	Problem string // a static sentence
}

func (e *ArgError) Error() string { return e.Arg + " " + e.Problem }

// Request validates the arguments into a request; a mistake is an *ArgError.
func (a PreflightArgs) Request() (PreflightRequest, error) {
	req := PreflightRequest{URL: a.URL, ServiceID: a.ServiceID,
		Options: preflight.Options{Network: a.Network, Scheme: a.Scheme, Asset: a.Asset, MaxAmount: a.MaxAmount}}
	switch strings.ToUpper(a.Method) {
	case "":
	case http.MethodGet, http.MethodPost:
		req.Method = strings.ToUpper(a.Method)
	default:
		return req, &ArgError{"method", "must be GET or POST"}
	}
	if a.Body != nil {
		if len(a.Body) > MaxPreflightBody {
			return req, &ArgError{"body", "is over 262144 bytes"}
		}
		if !json.Valid(a.Body) {
			return req, &ArgError{"body", "is not JSON"}
		}
		req.Body = a.Body
	}
	switch {
	case a.Network != "" && !preflight.ValidCAIP2(a.Network):
		return req, &ArgError{"network", "must be a CAIP-2 chain id (namespace:reference)"}
	case a.MaxAmount != "" && !preflight.ValidAmount(a.MaxAmount):
		return req, &ArgError{"max-amount", "must be a decimal integer of atomic units"}
	case a.ServiceID != "" && !reliability.ValidServiceID(a.ServiceID):
		return req, &ArgError{"service-id", "is not a CORTX service id"}
	}
	return req, nil
}

// Common gives scan and the surfaces the fields every report has: a
// preflight record has no criteria envelope; its summary stands as its
// verdict line.
func (r PreflightReport) Common() Envelope {
	return Envelope{Op: OpPreflight, URL: r.URL, CheckedAt: r.CheckedAt, VerdictLine: r.Summary}
}

// Outcome is the decision: GO, HOLD or STOP.
func (r PreflightReport) Outcome() string { return string(r.Decision) }
