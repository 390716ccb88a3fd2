package lint

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
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
	c := capture.Capture{Outcome: capture.OK, Status: 402}
	mcpFields := mcpResourceFields(doc)
	if mcpFields["x402Version=1"] {
		// A v1 document (what MCP servers of the x402 v1 era send) is
		// graded as v1, the way a v1 body is.
		c.Body = doc
	} else {
		c.Header = capture.Header{http.CanonicalHeaderKey(x402.HeaderName): {base64.StdEncoding.EncodeToString(doc)}}
	}
	res := Lint(Input{Method: "CALL", Capture: c, Now: now})
	kept := []Finding{}
	for _, f := range res.Findings {
		if mcpOnlyHTTP[f.Rule] || (f.Rule == ruleResourceURLInvalid && mcpFields[f.Field]) {
			continue
		}
		if f.Leg == LegHeader || f.Leg == LegBody {
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
		if res.Entries[i].Leg == LegHeader || res.Entries[i].Leg == LegBody {
			res.Entries[i].Leg = LegMCP
		}
	}
	res.Dialect = Dialect{}
	return res
}

// mcpResourceFields returns the resource fields of doc whose value is an
// absolute URL of the mcp scheme (resource.url in v2, accepts[i].resource
// in v1), and "x402Version=1" when doc declares version 1.
func mcpResourceFields(doc []byte) map[string]bool {
	var d struct {
		Version  json.Number `json:"x402Version"`
		Resource struct {
			URL string `json:"url"`
		} `json:"resource"`
		Accepts []struct {
			Resource string `json:"resource"`
		} `json:"accepts"`
	}
	out := map[string]bool{}
	if json.Unmarshal(doc, &d) != nil {
		// A field of another type: read what can be read, one by one.
		var loose map[string]json.RawMessage
		if json.Unmarshal(doc, &loose) != nil {
			return out
		}
		_ = json.Unmarshal(loose["x402Version"], &d.Version)
		_ = json.Unmarshal(loose["resource"], &d.Resource)
		_ = json.Unmarshal(loose["accepts"], &d.Accepts)
	}
	out["x402Version=1"] = d.Version == "1"
	out["resource.url"] = isMCPURL(d.Resource.URL)
	for i, a := range d.Accepts {
		out["accepts["+strconv.Itoa(i)+"].resource"] = isMCPURL(a.Resource)
	}
	return out
}

func isMCPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "mcp" && (u.Host != "" || u.Opaque != "")
}
