// Package mcp is payability's Model Context Protocol surface: one server with
// eight tools, each a typed input and a thin handler over ops — the same code
// the CLI runs — whose structured output is the --json JSON and whose text is
// the human report. Configuration that could aim the server at its host's
// network or sign for it (the address guard, keys, the CORTX API) is the
// server's, set by its operator; no tool argument reaches it.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/reliability"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/target"
)

// The tool names. They are stable: a changed tool is a new name.
const (
	ToolPreflight    = "x402_preflight"
	ToolLint         = "x402_lint"
	ToolCheck        = "x402_check"
	ToolMemo         = "x402_memo"
	ToolProbe        = "x402_probe"
	ToolReliability  = "x402_reliability"
	ToolTermsHash    = "x402_terms_hash"
	ToolVerifyReport = "x402_verify_report"
)

// Renderers write the human reports; the CLI supplies its own, so a tool's
// text is exactly what the command prints.
type Renderers struct {
	Op          func(w io.Writer, rep ops.Report) error
	Lint        func(w io.Writer, rep ops.LintReport) error
	Preflight   func(w io.Writer, rep ops.PreflightReport)
	Reliability func(w io.Writer, res reliability.Result) error
}

// Config is the server's configuration, set by its operator.
type Config struct {
	// Runner runs the ops; its Fetcher carries the address guard as the
	// operator set it (--allow-private).
	Runner ops.Runner
	// Key signs preflight records when set.
	Key *report.Key
	// Keys verifies reports when x402_verify_report is given no key set:
	// the server's own keys. Zero means none.
	Keys *report.KeySet
	// CORTXAPI is the CORTX API base URL ("" the default); CORTXAllowHTTP
	// lets it be plain http.
	CORTXAPI       string
	CORTXAllowHTTP bool
	Render         Renderers
	// MaxCalls bounds the tool calls running at once, over every session
	// (DefaultMaxCalls when 0); CallWait is how long a call beyond it waits
	// in line before it fails busy (DefaultCallWait when 0, no wait when
	// negative). At most 4 × MaxCalls calls wait.
	MaxCalls int
	CallWait time.Duration
}

// Defaults of the server-wide call bound (docs/mcp.md, "Bounds").
const (
	DefaultMaxCalls = 16
	DefaultCallWait = 30 * time.Second
)

// NewServer assembles the server and its tools in one place.
func NewServer(cfg Config) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "payability", Title: "payability: x402 preflight", Version: buildinfo.Version}, nil)
	h := handlers{cfg}
	g := newGate(cfg.MaxCalls, cfg.CallWait)
	// Tools that POST (payment probes, a gated POST) are not read-only: a
	// seller that fails open acts on what they send. GETs and local work are.
	posts := annotations(true, false)
	sends := annotations(true, true)
	local := annotations(false, true)
	add(s, g, &sdk.Tool{Name: ToolPreflight, Annotations: posts, Description: "Before paying an x402 endpoint: GO, HOLD or STOP (x402-preflight/v1). " +
		"Lints the unpaid 402, fetches it twice, sends two payment probes that cannot pay and unpaid HEAD and other-method requests, " +
		"and binds the decision to the selected entry's terms by terms_sha256. GO means no red flag was observed; it never guarantees that a payment settles."}, h.preflight)
	add(s, g, &sdk.Tool{Name: ToolLint, Annotations: posts, Description: "x402 protocol conformance of one endpoint's 402 challenge (x402-lint/v1): findings with rule id, severity and field path."}, h.lint)
	add(s, g, &sdk.Tool{Name: ToolCheck, Annotations: sends, Description: "A1 check: grade one endpoint's 402 challenge, field by field (payability criteria)."}, h.op(ops.OpCheck))
	add(s, g, &sdk.Tool{Name: ToolMemo, Annotations: sends, Description: "A4 memo: grade memo binding over two back-to-back GETs (payability criteria)."}, h.op(ops.OpMemo))
	add(s, g, &sdk.Tool{Name: ToolProbe, Annotations: posts, Description: "A3 probe: send the seven published invalid probes and grade each rail (rail-probe criteria)."}, h.op(ops.OpProbe))
	add(s, g, &sdk.Tool{Name: ToolReliability, Annotations: sends, Description: "Check a CORTX reliability record, bound to the endpoint's own 402 terms. Advisory: it never authorises a payment."}, h.reliability)
	add(s, g, &sdk.Tool{Name: ToolTermsHash, Annotations: local, Description: "terms_sha256 of every entry of a challenge (a PAYMENT-REQUIRED value or a v1 body): compare it with a preflight record's before signing. Sends nothing."}, h.termsHash)
	add(s, g, &sdk.Tool{Name: ToolVerifyReport, Annotations: local, Description: "Verify the Ed25519 signature of a signed report or preflight record against a JWKS given as text, or the server's own keys. Sends nothing."}, h.verify)
	return s
}

func annotations(openWorld, readOnly bool) *sdk.ToolAnnotations {
	f := false
	return &sdk.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &f, IdempotentHint: !openWorld, OpenWorldHint: &openWorld}
}

// objectSchema is every tool's output schema: the --json document, an
// object (docs/report-format.md and docs/mcp.md describe each).
var objectSchema = &jsonschema.Schema{Type: "object"}

func add[In any](s *sdk.Server, g *gate, t *sdk.Tool, h func(context.Context, In) (any, string, error)) {
	t.OutputSchema = objectSchema
	sdk.AddTool(s, t, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		done, err := g.enter(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer done()
		out, text, err := h(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		raw, err := marshal(out)
		if err != nil {
			return nil, nil, errInternal
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, raw, nil
	})
}

// marshal is the --json encoding (no HTML escaping), as raw JSON.
func marshal(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

// Tool failures are closed-form sentences.
var (
	errInternal  = errors.New("internal error: the result could not be produced")
	errNoKeys    = errors.New("jwks: give the signer's key set (this server has no keys of its own)")
	errBadJWKS   = errors.New("jwks: not a key set (a JWKS object of Ed25519 keys)")
	errBadReport = errors.New("report: not a JSON object")
)

// argError names the argument (the tool input's JSON name).
func argError(arg, problem string) error { return errors.New(arg + ": " + problem) }

// refusal turns an op's error into a closed-form tool failure.
func refusal(err error) error {
	var pe *target.PolicyError
	var ie *reliability.InputError
	var ae *ops.ArgError
	switch {
	case errors.As(err, &pe):
		return argError("url", "refused by the target-URL policy: "+pe.Error())
	case errors.As(err, &ie):
		return argError("input", ie.Error())
	case errors.As(err, &ae):
		return argError(strings.ReplaceAll(ae.Arg, "-", "_"), ae.Problem)
	}
	return errInternal
}

type handlers struct{ cfg Config }

// PreflightInput is x402_preflight's input.
type PreflightInput struct {
	URL       string `json:"url" jsonschema:"the x402 resource URL you are about to pay (https)"`
	Method    string `json:"method,omitempty" jsonschema:"the gated method, GET or POST; default: GET, then POST when GET is not a 402"`
	Body      string `json:"body,omitempty" jsonschema:"the JSON body every POST carries: the request you are about to pay for (default {})"`
	Network   string `json:"network,omitempty" jsonschema:"pay only on this CAIP-2 network, e.g. eip155:8453"`
	Scheme    string `json:"scheme,omitempty" jsonschema:"pay only with this scheme, e.g. exact"`
	Asset     string `json:"asset,omitempty" jsonschema:"pay only in this asset (token address or mint)"`
	MaxAmount string `json:"max_amount,omitempty" jsonschema:"pay at most this many atomic units (a decimal integer)"`
	ServiceID string `json:"service_id,omitempty" jsonschema:"also check this CORTX service's reliability record"`
}

func (h handlers) preflight(ctx context.Context, in PreflightInput) (any, string, error) {
	a := ops.PreflightArgs{URL: in.URL, Method: in.Method, Network: in.Network, Scheme: in.Scheme, Asset: in.Asset,
		MaxAmount: in.MaxAmount, ServiceID: in.ServiceID}
	if in.Body != "" {
		a.Body = []byte(in.Body)
	}
	req, err := a.Request()
	if err != nil {
		return nil, "", refusal(err)
	}
	req.CORTXAPI, req.CORTXAllowHTTP = h.cfg.CORTXAPI, h.cfg.CORTXAllowHTTP
	rep, err := h.cfg.Runner.Preflight(ctx, req)
	if err != nil {
		return nil, "", refusal(err)
	}
	var text bytes.Buffer
	h.cfg.Render.Preflight(&text, rep)
	if h.cfg.Key != nil {
		signed, err := report.Sign(rep, *h.cfg.Key)
		if err != nil {
			return nil, "", errInternal
		}
		return json.RawMessage(signed), text.String(), nil
	}
	return rep, text.String(), nil
}

// LintInput is x402_lint's input.
type LintInput struct {
	URL    string `json:"url" jsonschema:"the x402 resource URL"`
	Method string `json:"method,omitempty" jsonschema:"GET (default) or POST"`
	Body   string `json:"body,omitempty" jsonschema:"the JSON body a POST carries (default {})"`
}

func (h handlers) lint(ctx context.Context, in LintInput) (any, string, error) {
	method := strings.ToUpper(in.Method)
	if method != "" && method != "GET" && method != "POST" {
		return nil, "", argError("method", "must be GET or POST")
	}
	var body []byte
	if in.Body != "" {
		if !json.Valid([]byte(in.Body)) {
			return nil, "", argError("body", "is not JSON")
		}
		body = []byte(in.Body)
	}
	rep, err := h.cfg.Runner.Lint(ctx, in.URL, method, body)
	if err != nil {
		return nil, "", refusal(err)
	}
	var text bytes.Buffer
	if err := h.cfg.Render.Lint(&text, rep); err != nil {
		return nil, "", errInternal
	}
	return rep, text.String(), nil
}

// URLInput is the input of the criteria ops.
type URLInput struct {
	URL string `json:"url" jsonschema:"the x402 resource URL"`
}

func (h handlers) op(op string) func(context.Context, URLInput) (any, string, error) {
	return func(ctx context.Context, in URLInput) (any, string, error) {
		rep, err := h.cfg.Runner.Run(ctx, op, in.URL)
		if err != nil {
			return nil, "", refusal(err)
		}
		var text bytes.Buffer
		if err := h.cfg.Render.Op(&text, rep); err != nil {
			return nil, "", errInternal
		}
		return rep, text.String(), nil
	}
}

// ReliabilityInput is x402_reliability's input.
type ReliabilityInput struct {
	ServiceID   string `json:"service_id" jsonschema:"the CORTX service id (from the owner's badge, status page or docs)"`
	IntendedURL string `json:"intended_url" jsonschema:"the https URL you are about to pay"`
}

func (h handlers) reliability(ctx context.Context, in ReliabilityInput) (any, string, error) {
	switch {
	case in.ServiceID == "":
		return nil, "", argError("service_id", "is required")
	case in.IntendedURL == "":
		return nil, "", argError("intended_url", "is required")
	}
	c := reliability.Client{Fetcher: h.cfg.Runner.Fetcher, API: h.cfg.CORTXAPI, AllowHTTP: h.cfg.CORTXAllowHTTP, Now: h.cfg.Runner.Now}
	res, err := c.Check(ctx, in.ServiceID, in.IntendedURL)
	if err != nil {
		return nil, "", refusal(err)
	}
	var js, text bytes.Buffer
	if err := reliability.RenderJSON(&js, res); err != nil {
		return nil, "", errInternal
	}
	if err := h.cfg.Render.Reliability(&text, res); err != nil {
		return nil, "", errInternal
	}
	return json.RawMessage(bytes.TrimSpace(js.Bytes())), text.String(), nil
}

// TermsHashInput is x402_terms_hash's input.
type TermsHashInput struct {
	Challenge string `json:"challenge" jsonschema:"a PAYMENT-REQUIRED header value (base64 JSON) or a JSON challenge body"`
}

// TermsHashOutput is x402_terms_hash's output, as terms-hash --json prints it.
type TermsHashOutput struct {
	Entries []preflight.EntryHash `json:"entries"`
}

// maxChallenge bounds a challenge given as an argument.
const maxChallenge = 1 << 20

func (h handlers) termsHash(_ context.Context, in TermsHashInput) (any, string, error) {
	if len(in.Challenge) > maxChallenge {
		return nil, "", argError("challenge", "is over 1048576 bytes")
	}
	hs, ok := preflight.ParseChallenge([]byte(in.Challenge))
	if !ok {
		return nil, "", argError("challenge", "is neither a PAYMENT-REQUIRED value nor a JSON challenge")
	}
	var text strings.Builder
	for _, e := range hs {
		sum := "- (incomplete terms: no hash)"
		if e.TermsSHA256 != nil {
			sum = *e.TermsSHA256
		}
		text.WriteString(string(e.Leg) + " accepts[" + itoa(e.Index) + "] " + sum + "\n")
	}
	if len(hs) == 0 {
		text.WriteString("no entry a standard client reads\n")
	}
	return TermsHashOutput{Entries: hs}, text.String(), nil
}

// VerifyInput is x402_verify_report's input.
type VerifyInput struct {
	Report string `json:"report" jsonschema:"the signed report or preflight record, as JSON text"`
	JWKS   string `json:"jwks,omitempty" jsonschema:"the signer's key set as JWKS JSON text; default: this server's own keys"`
}

// VerifyOutput is x402_verify_report's output.
type VerifyOutput struct {
	Verified bool   `json:"verified"`
	Kid      string `json:"kid,omitempty"`
	// Error is the closed-form reason when not verified (report.Error codes).
	Error string `json:"error,omitempty"`
}

func (h handlers) verify(_ context.Context, in VerifyInput) (any, string, error) {
	if len(in.Report) > 4<<20 {
		return nil, "", argError("report", "is over 4194304 bytes")
	}
	if !json.Valid([]byte(in.Report)) || !strings.HasPrefix(strings.TrimSpace(in.Report), "{") {
		return nil, "", errBadReport
	}
	var keys report.KeySet
	switch {
	case in.JWKS != "":
		k, err := report.ParseJWKS([]byte(in.JWKS))
		if err != nil {
			return nil, "", errBadJWKS
		}
		keys = k
	case h.cfg.Keys != nil:
		keys = *h.cfg.Keys
	default:
		return nil, "", errNoKeys
	}
	kid, err := report.Verify([]byte(in.Report), keys)
	if err != nil {
		code := "malformed"
		var re *report.Error
		if errors.As(err, &re) {
			code = re.Code()
		}
		return VerifyOutput{Error: code}, "NOT VERIFIED: " + code + "\n", nil
	}
	return VerifyOutput{Verified: true, Kid: kid}, "VERIFIED: signed by kid " + kid + "\n", nil
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
