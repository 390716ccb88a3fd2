package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
)

// The third service, x402-preflight (issue 25): the preflight record and
// the lint report of any seller's x402 endpoint, sold per call on the same
// gate and rails as the two seed services. No criteria document publishes
// it: its rules are x402-preflight/v1 and x402-lint/v1, and the sentences a
// criteria document would carry (honesty, never, disclosure, retention)
// are written here, for the page and the pre-check.

// PrefixX402 is the route prefix of x402-preflight when services share a worker.
const PrefixX402 = "/toll/x402"

// The default prices of x402-preflight's ops, USDC atomic units (serve
// --price-preflight, --price-lint): $0.02 and $0.01.
const (
	DefaultPricePreflight = 20000
	DefaultPriceLint      = 10000
)

// DefaultFreePerCallerX402 is the default of Config.FreePerCallerX402: the
// seed services' published allowance of one wallet a day.
const DefaultFreePerCallerX402 = 100

// x402FreeMinInterval is the least time between two free pre-checks of one
// caller: the seed services' published 5,000 ms.
const x402FreeMinInterval = 5 * time.Second

// The service's own sentences.
const (
	x402Honesty    = "A preflight decision (GO, HOLD or STOP) and a lint report state what payability observed of the seller's unpaid challenge and of payment probes that cannot pay, at the check-end time; neither says that a paid call will be delivered."
	x402Never      = "It never pays the seller, never sends a payment that could settle, and never claims paid delivery; it does not look up CORTX records for you."
	x402Disclosure = "payability fetched the endpoint without paying, under the published x402-preflight/v1 and x402-lint/v1 documents, and signed this report with this service's key."
	x402Retention  = "Reports are not stored. The ledger keeps the payment, the decision or the lint counts and the time, never the URL or anything fetched."
	x402Boundary   = "The decision is bound to the terms it checked (terms_sha256): a client should pay only the entry with that hash."
	x402FreePre    = "The free pre-check checks the URL against the target-URL policy without fetching it and returns no decision and no finding."
	x402Includes   = "One signed answer for one endpoint, as payability preflight --json or lint --json prints it, plus the payment and the price; a failure on our side resumes once at no charge."

	assessPreflight = "The URL is within the published target-URL policy. This pre-check did not fetch the endpoint and returns no decision and no reason; the paid preflight op fetches it and sends payment probes that cannot pay."
	assessLint      = "The URL is within the published target-URL policy. This pre-check did not fetch the endpoint and returns no finding; the paid lint op grades its 402 under x402-lint/v1."
)

// serviceTerms are what the pre-check, the page and the OpenAPI document
// say of a service: a criteria document's fields for the seed services,
// ours for x402-preflight.
type serviceTerms struct {
	Service, Version, CriteriaID, CriteriaRevision string
	Corpus                                         corpus.Ref
	PerDay                                         int
	MinInterval                                    time.Duration
	Disclosure, Honesty, Retention                 string
}

func (s *Server) termsOf(service string) serviceTerms {
	return termsOf(service, s.cfg.FreePerCallerX402)
}

// termsOf is a service's terms; x402PerDay is x402-preflight's allowance.
func termsOf(service string, x402PerDay int) serviceTerms {
	if service == criteria.ServiceX402Preflight {
		return serviceTerms{
			Service: service, Version: buildinfo.Version, CriteriaID: preflight.DocumentID, CriteriaRevision: preflight.Revision,
			Corpus: corpus.PreflightRef(), PerDay: x402PerDay, MinInterval: x402FreeMinInterval,
			Disclosure: x402Disclosure, Honesty: x402Honesty, Retention: x402Retention,
		}
	}
	doc, _ := criteria.ForService(service)
	return serviceTerms{
		Service: doc.Service, Version: doc.Version, CriteriaID: doc.CriteriaID, CriteriaRevision: doc.CriteriaRevision,
		Corpus: corpus.RefOf(service), PerDay: doc.FreeTier.PerDay,
		MinInterval: time.Duration(doc.FreeTier.MinIntervalMS) * time.Millisecond,
		Disclosure:  doc.DisclosureSentence, Honesty: doc.HonestyLine, Retention: doc.Retention,
	}
}

// x402Documents is GET …/criteria of x402-preflight: its two documents,
// each exactly as payability criteria x402-preflight and x402-lint print it
// (corpus.sha256 set to the pin of the embedded corpus).
func x402Documents() ([]byte, error) {
	pre, err := corpus.PreflightDocument()
	if err != nil {
		return nil, err
	}
	rules, err := corpus.LintRules()
	if err != nil {
		return nil, err
	}
	return joinDocuments(preflight.DocumentID, pre, lint.Rules().ID, rules), nil
}

// joinDocuments writes {"<name1>": doc1, "<name2>": doc2} with each document
// byte for byte (json.Marshal would re-encode a RawMessage).
func joinDocuments(name1 string, doc1 []byte, name2 string, doc2 []byte) []byte {
	n1, _ := json.Marshal(name1)
	n2, _ := json.Marshal(name2)
	var b bytes.Buffer
	b.WriteByte('{')
	b.Write(n1)
	b.WriteByte(':')
	b.Write(bytes.TrimSpace(doc1))
	b.WriteByte(',')
	b.Write(n2)
	b.WriteByte(':')
	b.Write(bytes.TrimSpace(doc2))
	b.WriteByte('}')
	return b.Bytes()
}

// x402Corpora is GET …/corpus of x402-preflight: the two corpus files the
// graders pass at 100%, each byte for byte.
func x402Corpora() []byte {
	return joinDocuments(corpus.PreflightRef().ID, corpus.PreflightRaw(), corpus.LintRef().ID, corpus.LintRawFile())
}

// preflightRequest is the body of POST …/preflight: the CLI's arguments
// (payability preflight URL --method --body --network --max-amount). body
// is the JSON value every POST of the preflight carries.
type preflightRequest struct {
	URL       *string         `json:"url"`
	Method    *string         `json:"method"`
	Body      json.RawMessage `json:"body"`
	Network   *string         `json:"network"`
	MaxAmount *string         `json:"max_amount"`
}

// lintRequest is the body of POST …/lint (payability lint URL --method
// --body): lint has no network or budget to choose by.
type lintRequest struct {
	URL    *string         `json:"url"`
	Method *string         `json:"method"`
	Body   json.RawMessage `json:"body"`
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// bodyArg is a request's body member as the op's argument: nil when absent
// or null.
func bodyArg(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// x402Call decodes the body of a paid preflight or lint request into the
// call to run. An argument the op refuses is the call's urlErr: free, like
// a URL the policy refuses, and answered only after the payment's form.
func (s *Server) x402Call(w http.ResponseWriter, r *http.Request, op, route string) (paidCall, bool) {
	if op == ops.OpLint {
		var body lintRequest
		if !s.readBody(w, r, route, &body) {
			return paidCall{}, false
		}
		c := paidCall{url: deref(body.URL), urlErr: checkTargetURL(body.URL)}
		method := strings.ToUpper(deref(body.Method))
		reqBody := bodyArg(body.Body)
		switch {
		case c.urlErr != nil:
		case method != "" && method != http.MethodGet && method != http.MethodPost:
			c.urlErr = &ops.ArgError{Arg: "method", Problem: "must be GET or POST"}
		case reqBody != nil && method != http.MethodPost:
			c.urlErr = &ops.ArgError{Arg: "body", Problem: "needs method POST"}
		}
		c.run = func(ctx context.Context) (ops.Report, error) { return s.cfg.Runner.Lint(ctx, c.url, method, reqBody) }
		return c, true
	}
	var body preflightRequest
	if !s.readBody(w, r, route, &body) {
		return paidCall{}, false
	}
	c := paidCall{url: deref(body.URL), urlErr: checkTargetURL(body.URL)}
	req, err := ops.PreflightArgs{URL: c.url, Method: deref(body.Method), Body: bodyArg(body.Body),
		Network: deref(body.Network), MaxAmount: deref(body.MaxAmount)}.Request()
	if c.urlErr == nil && err != nil {
		c.urlErr = err
	}
	c.run = func(ctx context.Context) (ops.Report, error) { return s.cfg.Runner.Preflight(ctx, req) }
	return c, true
}

// argProblem renders an argument the op refuses: <arg>_invalid and the
// argument's static sentence.
func argProblem(err error) (problem, bool) {
	var ae *ops.ArgError
	if !errors.As(err, &ae) {
		return problem{}, false
	}
	name := strings.ReplaceAll(ae.Arg, "-", "_")
	return problem{name + "_invalid", name + " " + ae.Problem + "."}, true
}

// bazaarBodySchemaOf is the bazaar body's schema of a paid op: the seed
// ops' {"url"}, or the op's own arguments.
func bazaarBodySchemaOf(op string) schema {
	switch op {
	case ops.OpPreflight:
		return closedObject([]string{"url"}, schema{"url": str(), "method": strEnum(http.MethodGet, http.MethodPost),
			"body": schema{}, "network": str(), "max_amount": pattern(digits)})
	case ops.OpLint:
		return closedObject([]string{"url"}, schema{"url": str(), "method": strEnum(http.MethodGet, http.MethodPost), "body": schema{}})
	}
	return bazaarBodySchema()
}

// paidBodySchema is the request body of a paid op in the OpenAPI document.
func paidBodySchema(op string) schema {
	url := schema{"type": "string", "format": "uri", "description": "the endpoint to check (http or https, no credentials)"}
	method := schema{"type": "string", "enum": []string{http.MethodGet, http.MethodPost},
		"description": "the gated method (case-insensitive); preflight: default GET, then POST when GET is not a 402; lint: default GET"}
	body := schema{"description": "the JSON value every POST to the endpoint carries (default {}); lint: with method POST only"}
	switch op {
	case ops.OpPreflight:
		return closedObject([]string{"url"}, schema{"url": url, "method": method, "body": body,
			"network":    schema{"type": "string", "description": "pay only on this CAIP-2 network (e.g. solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp, eip155:8453)"},
			"max_amount": schema{"type": "string", "pattern": digits, "description": "pay at most this many atomic units of the asset"},
		})
	case ops.OpLint:
		return closedObject([]string{"url"}, schema{"url": url, "method": method, "body": body})
	}
	return urlBodySchema()
}

// x402ReportSchema is the signed preflight record or lint report (the JSON
// of payability preflight --json or lint --json, docs/report-format.md),
// with its payment and price.
func x402ReportSchema(op string) schema {
	props := schema{
		"op":         strConst(op),
		"url":        str(),
		"checked_at": pattern(timePattern),
		"payment": closedObject([]string{"rail", "network", "tx", "resumed"}, schema{
			"rail": strEnum(gate.RailDirect, gate.RailFacilitator), "network": pattern(caip2), "tx": str(), "resumed": boolean(),
		}),
		"price":     closedObject([]string{"usdc_units", "label"}, schema{"usdc_units": pattern(digits), "label": str()}),
		"signature": signatureSchema(),
	}
	required := []string{"op", "url", "checked_at", "payment", "price", "signature"}
	desc := "A signed preflight record (x402-preflight/v1; payability preflight --json)"
	if op == ops.OpPreflight {
		props["document"] = strConst(preflight.DocumentID)
		props["revision"] = str()
		props["corpus"] = closedObject([]string{"id", "sha256"}, schema{"id": str(), "sha256": pattern(hexPin)})
		props["tool"] = strConst("payability")
		props["version"] = str()
		props["decision"] = strEnum(string(preflight.Go), string(preflight.Hold), string(preflight.Stop))
		props["reasons"] = arrayOf(str())
		props["method"] = str()
		props["fetches"] = arrayOf(freeObject("one unpaid fetch: role, method, outcome, status"))
		props["probes"] = arrayOf(freeObject("one payment probe that cannot pay, graded"))
		props["terms_sha256"] = schema{"type": []string{"string", "null"}}
		props["summary"] = str()
		props["no_funds_property"] = str()
		required = append(required, "document", "revision", "corpus", "tool", "version", "decision", "reasons", "summary", "no_funds_property")
	} else {
		desc = "A signed lint report (x402-lint/v1; payability lint --json)"
		props["rules"] = closedObject([]string{"id", "revision", "corpus_sha256"}, schema{"id": strConst(lint.Rules().ID), "revision": str(), "corpus_sha256": pattern(hexPin)})
		props["method"] = strEnum(http.MethodGet, http.MethodPost)
		props["status"] = integer()
		props["dialect"] = freeObject("which legs were present: v2_header, v1_body")
		props["entries"] = arrayOf(freeObject("one accepts entry, summarised"))
		props["findings"] = arrayOf(freeObject("one finding: rule id, severity, leg, field path, static message"))
		props["conforms"] = boolean()
		required = append(required, "rules", "method", "status", "dialect", "entries", "findings", "conforms")
	}
	return schema{"type": "object", "properties": props, "required": required,
		"description": desc + ", with payment and price: RFC 8785 canonical JSON with an Ed25519 signature over the document without its signature member."}
}

// x402ExampleFields are the fields of the bazaar example of a preflight
// record and of a lint report.
var x402ExampleFields = map[string][]string{
	ops.OpPreflight: {"document", "op", "url", "checked_at", "decision", "summary"},
	ops.OpLint:      {"op", "url", "checked_at", "conforms"},
}

func x402BazaarOutputSchema(op string) schema {
	props := schema{}
	for _, f := range x402ExampleFields[op] {
		props[f] = str()
	}
	if op == ops.OpLint {
		props["conforms"] = boolean()
	}
	return schema{"type": "object", "properties": props, "required": x402ExampleFields[op]}
}

// x402ExampleReport is the example answer of a preflight or lint call: a
// GO record or a conforming report of the example URL at a fixed time,
// built by the same constructors as the real ones; not signed.
func x402ExampleReport(op string, end time.Time) map[string]any {
	var rep any
	if op == ops.OpPreflight {
		rep = ops.NewPreflightReport(exampleBody["url"], end, preflight.Result{Decision: preflight.Go, Reasons: []preflight.Reason{}})
	} else {
		rep = ops.LintReport{Op: ops.OpLint, Rules: ops.LintRulesRef(), URL: exampleBody["url"], Method: http.MethodGet,
			Conforms: true, CheckedAt: criteria.Timestamp(end)}
	}
	raw, _ := json.Marshal(rep)
	all := map[string]any{}
	_ = json.Unmarshal(raw, &all)
	out := map[string]any{}
	for _, f := range x402ExampleFields[op] {
		out[f] = all[f]
	}
	return out
}
