package lint

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// LegMCP is a PaymentRequired object an MCP tool answered with (the x402
// MCP transport's tool-result binding: specs/transports-v2/mcp.md,
// "Payment Required Signaling").
const LegMCP Leg = "mcp"

// mcpOnlyHTTP are the rules about an HTTP response around a 402 (caching,
// CORS): an MCP tool result has no such response of its own.
var mcpOnlyHTTP = map[string]bool{ruleCacheControl: true, ruleCORSExposeHeaders: true}

// LintMCP grades the PaymentRequired object doc (JSON) an MCP tool answered
// with as the v2 document of a 402 challenge: every rule of the PAYMENT-
// REQUIRED header's leg applies, its findings on LegMCP. What belongs to
// HTTP does not: the response's caching and CORS headers, and the
// comparison of resource.url with a called URL (a tool has none); a
// resource.url of the mcp scheme (the transport's own example,
// mcp://tool/NAME) is a valid resource URL. Pure, as Lint.
func LintMCP(doc []byte, now time.Time) Result {
	c := capture.Capture{Outcome: capture.OK, Status: 402,
		Header: capture.Header{http.CanonicalHeaderKey(x402.HeaderName): {base64.StdEncoding.EncodeToString(doc)}}}
	res := Lint(Input{Method: "CALL", Capture: c, Now: now})
	mcpResource := mcpResourceURL(doc)
	kept := []Finding{}
	for _, f := range res.Findings {
		if mcpOnlyHTTP[f.Rule] || (f.Rule == ruleResourceURLInvalid && f.Field == "resource.url" && mcpResource) {
			continue
		}
		if f.Leg == LegHeader {
			f.Leg = LegMCP
		}
		kept = append(kept, f)
	}
	res.Findings = kept
	res.Conforms = true
	for _, f := range kept {
		if f.Severity == Error {
			res.Conforms = false
		}
	}
	for i := range res.Entries {
		if res.Entries[i].Leg == LegHeader {
			res.Entries[i].Leg = LegMCP
		}
	}
	res.Dialect = Dialect{}
	return res
}

// mcpResourceURL reports whether doc's resource.url is an absolute URL of
// the mcp scheme.
func mcpResourceURL(doc []byte) bool {
	var d struct {
		Resource struct {
			URL string `json:"url"`
		} `json:"resource"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return false
	}
	u, err := url.Parse(d.Resource.URL)
	return err == nil && u.Scheme == "mcp" && (u.Host != "" || u.Opaque != "")
}
