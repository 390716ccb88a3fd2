package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
)

// maxChallengeHeader bounds our PAYMENT-REQUIRED header (bazaar included).
const maxChallengeHeader = 3072

var allServices = []string{ServeAll, criteria.ServicePayability, criteria.ServiceRailProbe, criteria.ServiceX402Preflight}

// routesOfRouter are the router's patterns as "METHOD path", the two
// fallbacks ("GET /", "POST /") left out; "{$}" marks an exact path.
func routesOfRouter(s *Server) []string {
	var out []string
	for _, p := range s.Patterns() {
		if p == "GET /" || p == "POST /" {
			continue
		}
		out = append(out, strings.TrimSuffix(p, "{$}"))
	}
	sort.Strings(out)
	return out
}

// The OpenAPI document validates as OpenAPI 3.1 and names exactly the
// routes the router serves (HEAD where GET is served), on every kind of
// worker, so neither can drift from the other.
func TestOpenAPIDocumentIsValidAndMatchesTheRouter(t *testing.T) {
	for _, svc := range allServices {
		t.Run(svc, func(t *testing.T) {
			h := newHarness(t, svc)
			res := h.do(http.MethodGet, "/openapi.json", "", nil)
			if res.status != 200 || res.header.Get("Content-Type") != "application/json" {
				t.Fatalf("openapi.json: %d %s", res.status, res.header.Get("Content-Type"))
			}
			doc, err := openapi3.NewLoader().LoadFromData(res.body)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if !doc.IsOpenAPI31OrLater() {
				t.Fatalf("openapi is %q, want 3.1", doc.OpenAPI)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("validate: %v", err)
			}
			var inDoc []string
			var heads []string
			for path, item := range doc.Paths.Map() {
				for method := range item.Operations() {
					if method == http.MethodHead {
						heads = append(heads, "GET "+path)
						continue
					}
					inDoc = append(inDoc, method+" "+path)
				}
			}
			sort.Strings(inDoc)
			served := routesOfRouter(h.s)
			if !slices.Equal(inDoc, served) {
				t.Errorf("document and router differ:\n doc    %v\n router %v", inDoc, served)
			}
			for _, g := range heads {
				if !slices.Contains(served, g) {
					t.Errorf("HEAD documented where the router serves no %s", g)
				}
			}
		})
	}
}

// Every paid op carries x-payment-info in x402scan's shape and a 402 with
// the PAYMENT-REQUIRED header; every other op declares no security.
func TestOpenAPIPaidOps(t *testing.T) {
	h := newHarness(t, ServeAll)
	var doc struct {
		Paths map[string]map[string]struct {
			PaymentInfo *struct {
				Price struct {
					Mode, Currency, Amount string
				}
				Protocols []map[string]struct {
					Network, Asset, Amount, Scheme string
				}
			} `json:"x-payment-info"`
			Security  *[]any `json:"security"`
			Responses map[string]struct {
				Headers map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(h.do(http.MethodGet, "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	paid := map[string]string{"/toll/payability/check": "0.010000", "/toll/payability/memo": "0.010000", "/toll/rail-probe/probe": "0.020000",
		"/toll/x402/preflight": "0.020000", "/toll/x402/lint": "0.010000"}
	for path, item := range doc.Paths {
		for method, op := range item {
			want, isPaid := paid[path]
			isPaid = isPaid && method != "options"
			switch {
			case isPaid:
				pi := op.PaymentInfo
				if pi == nil || pi.Price.Mode != "fixed" || pi.Price.Currency != "USD" || pi.Price.Amount != want || len(pi.Protocols) != 1 {
					t.Errorf("%s %s: x-payment-info %+v", method, path, pi)
					continue
				}
				x := pi.Protocols[0]["x402"]
				if x.Network != gate.Mainnet.CAIP2 || x.Asset != gate.Mainnet.Mint || x.Scheme != "exact" {
					t.Errorf("%s %s: x402 protocol %+v", method, path, x)
				}
				if _, ok := op.Responses["402"].Headers["PAYMENT-REQUIRED"]; !ok {
					t.Errorf("%s %s: 402 without PAYMENT-REQUIRED", method, path)
				}
			default:
				if op.PaymentInfo != nil {
					t.Errorf("%s %s: free op with x-payment-info", method, path)
				}
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s %s: free op without security: []", method, path)
				}
			}
		}
	}
}

func TestUSDDecimal(t *testing.T) {
	for units, want := range map[uint64]string{0: "0.000000", 1: "0.000001", 10000: "0.010000", 20000: "0.020000", 1_000_000: "1.000000", 12_345_678: "12.345678"} {
		if got := usdDecimal(units); got != want {
			t.Errorf("usdDecimal(%d) = %q, want %q", units, got, want)
		}
	}
}

// decodeHeader decodes our PAYMENT-REQUIRED header.
func decodeHeader(t *testing.T, v string) map[string]any {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Our v2 challenges carry the bazaar extension: info.input is a JSON POST
// with a {url} body, info.output an example, and info validates against
// schema with a real JSON Schema 2020-12 validator.
func TestChallengesCarryAValidBazaarExtension(t *testing.T) {
	h := newHarness(t, ServeAll)
	for _, path := range []string{"/toll/payability/check", "/toll/payability/memo", "/toll/rail-probe/probe"} {
		for _, req := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPost, `{"url":"https://example.com/x"}`}} {
			res := h.do(req.method, path, req.body, map[string]string{"Content-Type": "application/json"})
			if res.status != http.StatusPaymentRequired {
				t.Fatalf("%s %s: %d", req.method, path, res.status)
			}
			// The whole header fits a proxy's 4 KiB response-header buffer
			// with room for the others (docs/operations.md).
			if n := len(res.header.Get("PAYMENT-REQUIRED")); n > maxChallengeHeader {
				t.Errorf("%s: PAYMENT-REQUIRED is %d bytes, over %d", path, n, maxChallengeHeader)
			}
			hdr := decodeHeader(t, res.header.Get("PAYMENT-REQUIRED"))
			bz, _ := hdr["extensions"].(map[string]any)["bazaar"].(map[string]any)
			info, _ := bz["info"].(map[string]any)
			input, _ := info["input"].(map[string]any)
			if input["type"] != "http" || input["method"] != "POST" || input["bodyType"] != "json" {
				t.Errorf("%s: input %v", path, input)
			}
			if body, _ := input["body"].(map[string]any); body["url"] == nil || len(body) != 1 {
				t.Errorf("%s: input.body %v", path, input["body"])
			}
			if out, _ := info["output"].(map[string]any); out["type"] != "json" || out["example"] == nil {
				t.Errorf("%s: output %v", path, info["output"])
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("bazaar.json", bz["schema"]); err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile("bazaar.json")
			if err != nil {
				t.Fatalf("%s: schema does not compile: %v", path, err)
			}
			if err := sch.Validate(info); err != nil {
				t.Errorf("%s: info does not validate against schema: %v", path, err)
			}
			// The schema refuses what it must refuse: a GET input.
			bad := map[string]any{"input": map[string]any{"type": "http", "method": "GET", "bodyType": "json", "body": map[string]any{"url": "x"}}}
			if sch.Validate(bad) == nil {
				t.Errorf("%s: schema accepts a GET input", path)
			}
		}
	}
}

// Both discovery documents list every paid resource the router serves, on
// every kind of worker, and nothing else.
func TestWellKnownDiscoveryListsEveryPaidResource(t *testing.T) {
	for _, svc := range allServices {
		t.Run(svc, func(t *testing.T) {
			h := newHarness(t, svc)
			var want []string
			for _, r := range routesOfRouter(h.s) {
				method, path, _ := strings.Cut(r, " ")
				if method == http.MethodPost && (strings.HasSuffix(path, "/check") || strings.HasSuffix(path, "/memo") || strings.HasSuffix(path, "/probe") ||
					strings.HasSuffix(path, "/preflight") || strings.HasSuffix(path, "/lint")) {
					want = append(want, h.srv.URL+path)
				}
			}
			sort.Strings(want)

			var fan struct {
				Version   int
				Resources []string
			}
			json.Unmarshal(h.do(http.MethodGet, "/.well-known/x402", "", nil).body, &fan)
			sort.Strings(fan.Resources)
			if fan.Version != 1 || !slices.Equal(fan.Resources, want) {
				t.Errorf("/.well-known/x402: %+v, want %v", fan, want)
			}

			var man struct {
				X402Version int   `json:"x402Version"`
				LastUpdated int64 `json:"lastUpdated"`
				Items       []struct {
					Resource struct{ URL string }
					Type     string
					Accepts  []map[string]any
					Input    struct{ Method, BodyType string }
				}
			}
			json.Unmarshal(h.do(http.MethodGet, "/.well-known/x402.json", "", nil).body, &man)
			var got []string
			for _, it := range man.Items {
				got = append(got, it.Resource.URL)
				if it.Type != "http" || it.Input.Method != "POST" || it.Input.BodyType != "json" || len(it.Accepts) != 1 {
					t.Errorf("item %+v", it)
				}
				if _, hasMemo := it.Accepts[0]["extra"].(map[string]any)["memo"]; hasMemo {
					t.Errorf("advisory accepts carries a memo: %v", it.Accepts[0])
				}
			}
			sort.Strings(got)
			if man.X402Version != 2 || man.LastUpdated != h.clock.Now().Unix() || !slices.Equal(got, want) {
				t.Errorf("/.well-known/x402.json: version %d, lastUpdated %d, items %v, want %v", man.X402Version, man.LastUpdated, got, want)
			}
		})
	}
}

// Unknown paths list the service roots this worker sells; NOT COVERED
// names where an op lives.
func TestRoutingMessages(t *testing.T) {
	both := []string{"/toll/payability/", "/toll/rail-probe/", "/toll/x402/"}
	cases := []struct {
		name, service, method, path string
		wantError                   string
		wantServices, wantRoutes    []string
		wantDetail                  string
	}{
		{"unknown GET, both services", ServeAll, http.MethodGet, "/criteria", "not_found", both, nil, "roots"},
		{"unknown GET under a root", ServeAll, http.MethodGet, "/toll/payability/nothing", "not_found", both, nil, "roots"},
		{"unknown GET, rail-probe only", criteria.ServiceRailProbe, http.MethodGet, "/nothing", "not_found", []string{"/toll/rail-probe/"}, nil, "roots"},
		{"probe at the root", ServeAll, http.MethodPost, "/probe", "NOT COVERED", both, []string{"/toll/rail-probe/probe"}, "probe is under /toll/rail-probe/"},
		{"probe under the wrong root", ServeAll, http.MethodPost, "/toll/payability/probe", "NOT COVERED", both, []string{"/toll/rail-probe/probe"}, "probe is under /toll/rail-probe/"},
		{"check at the root", ServeAll, http.MethodPost, "/check", "NOT COVERED", both, []string{"/toll/payability/check"}, "check is under /toll/payability/"},
		{"check on a rail-probe worker", criteria.ServiceRailProbe, http.MethodPost, "/check", "NOT COVERED", []string{"/toll/rail-probe/"}, nil, "payability-verdict, which this worker does not serve"},
		{"precheck at the root", ServeAll, http.MethodPost, "/precheck", "NOT COVERED", both, []string{"/toll/payability/precheck", "/toll/rail-probe/precheck", "/toll/x402/precheck"}, "under each service root"},
		{"anything else", ServeAll, http.MethodPost, "/toll/payability/refund", "NOT COVERED", both, nil, "serves ops check, memo, probe, preflight, lint only"},
		{"preflight under the wrong root", ServeAll, http.MethodPost, "/toll/payability/preflight", "NOT COVERED", both, []string{"/toll/x402/preflight"}, "preflight is under /toll/x402/"},
		{"lint on a rail-probe worker", criteria.ServiceRailProbe, http.MethodPost, "/lint", "NOT COVERED", []string{"/toll/rail-probe/"}, nil, "lint belongs to x402-preflight, which this worker does not serve"},
	}
	harnesses := map[string]*harness{}
	for _, c := range cases {
		if harnesses[c.service] == nil {
			harnesses[c.service] = newHarness(t, c.service)
		}
		h := harnesses[c.service]
		t.Run(c.name, func(t *testing.T) {
			res := h.do(c.method, c.path, "{}", map[string]string{"Content-Type": "application/json"})
			var body struct {
				Error, Detail    string
				Services, Routes []string
			}
			json.Unmarshal(res.body, &body)
			if res.status != 404 || body.Error != c.wantError || !slices.Equal(body.Services, c.wantServices) ||
				!slices.Equal(body.Routes, c.wantRoutes) || !strings.Contains(body.Detail, c.wantDetail) {
				t.Errorf("%s %s: %d %s", c.method, c.path, res.status, res.body)
			}
		})
	}
}

// Every 402 is Cache-Control: no-store; the paid routes answer CORS (with
// the payment headers exposed) and an OPTIONS preflight; the free
// pre-check does not, so other sites cannot spend a visitor's allowance.
func TestPaidRoutesLintHygiene(t *testing.T) {
	h := newHarness(t, ServeAll)
	jsonCT := map[string]string{"Content-Type": "application/json"}
	for _, path := range []string{"/toll/payability/check", "/toll/payability/memo", "/toll/rail-probe/probe"} {
		for _, c := range []struct {
			method, body string
			hdr          map[string]string
		}{
			{http.MethodGet, "", nil},
			{http.MethodHead, "", nil},
			{http.MethodPost, `{"url":"https://example.com/x"}`, jsonCT},
			{http.MethodPost, `{"url":"https://example.com/x"}`, map[string]string{"Content-Type": "application/json", gate.HeaderPaymentTx: "not-a-signature", gate.HeaderPaymentMemo: "m"}},
		} {
			res := h.do(c.method, path, c.body, c.hdr)
			if res.status != 402 {
				t.Fatalf("%s %s: %d", c.method, path, res.status)
			}
			if got := res.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("%s %s: Cache-Control %q", c.method, path, got)
			}
			if res.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.header.Get("Access-Control-Expose-Headers"), "PAYMENT-REQUIRED, PAYMENT-RESPONSE") {
				t.Errorf("%s %s: CORS %v", c.method, path, res.header)
			}
			if hdr := decodeHeader(t, res.header.Get("PAYMENT-REQUIRED")); hdr["accepts"].([]any)[0].(map[string]any)["maxTimeoutSeconds"] != float64(120) {
				t.Errorf("%s %s: maxTimeoutSeconds missing", c.method, path)
			}
		}
		res := h.do(http.MethodOptions, path, "", map[string]string{"Origin": "https://buyer.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type, payment-signature"})
		if res.status != http.StatusNoContent || res.header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(res.header.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(res.header.Get("Access-Control-Allow-Headers"), "PAYMENT-SIGNATURE") ||
			!strings.Contains(res.header.Get("Access-Control-Expose-Headers"), "PAYMENT-REQUIRED") {
			t.Errorf("OPTIONS %s: %d %v", path, res.status, res.header)
		}
	}
	for _, doc := range []string{"/openapi.json", "/.well-known/x402", "/.well-known/x402.json"} {
		if res := h.do(http.MethodGet, doc, "", nil); res.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s is not readable from other origins", doc)
		}
	}
	res := h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://example.com/x","caller":"`+testPayTo+`"}`, jsonCT)
	if res.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("the pre-check answers CORS: %v", res.header)
	}
	// The exhausted pre-check's 402 (the same client again at once) is a challenge too.
	res = h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://example.com/x","caller":"`+testPayTo+`"}`, jsonCT)
	if res.status != 402 || res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("exhausted pre-check: %d %v", res.status, res.header)
	}
}

// POST /verify says verified (with the kid) for a report this server
// signed, and names the closed reason for a tampered one; at the root and
// under each service root. The pasted report is never stored or logged.
func TestVerifyEndpoint(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	res, _, _ := h.payAndPost("/toll/payability/check", seller.URL+"/canary-verify-4b1d")
	if res.status != 200 {
		t.Fatalf("paid check: %d %s", res.status, res.body)
	}
	signed := res.body
	tampered := bytes.Replace(signed, []byte(`"POPULATED"`), []byte(`"UNCONFIGURED"`), 1)
	if bytes.Equal(tampered, signed) {
		tampered = bytes.Replace(signed, []byte(`"check"`), []byte(`"memo"`), 1)
	}
	jsonCT := map[string]string{"Content-Type": "application/json"}
	for _, route := range []string{"/verify", "/toll/payability/verify", "/toll/rail-probe/verify"} {
		cases := []struct {
			name, body string
			hdr        map[string]string
			status     int
			verified   bool
			reason     string
		}{
			{"real report", string(signed), jsonCT, 200, true, ""},
			{"tampered report", string(tampered), jsonCT, 200, false, "bad_signature"},
			{"unsigned", `{"op":"check"}`, jsonCT, 200, false, "no_signature"},
			{"not JSON", `nope`, jsonCT, 200, false, "malformed"},
			{"form post", "report=x", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, false, ""},
			{"over the cap", `"` + strings.Repeat("a", RequestBodyCap) + `"`, jsonCT, 413, false, ""},
		}
		for _, c := range cases {
			res := h.do(http.MethodPost, route, c.body, c.hdr)
			if res.status != c.status {
				t.Errorf("%s %s: %d %s", route, c.name, res.status, res.body)
				continue
			}
			if c.status != 200 {
				continue
			}
			var v Verification
			json.Unmarshal(res.body, &v)
			gotReason := ""
			if v.Reason != nil {
				gotReason = *v.Reason
			}
			if v.Verified != c.verified || gotReason != c.reason || (v.Kid != nil) != c.verified {
				t.Errorf("%s %s: %s", route, c.name, res.body)
			}
			if c.verified && *v.Kid != h.keys.Current.Kid {
				t.Errorf("%s: kid %s, want %s", route, *v.Kid, h.keys.Current.Kid)
			}
		}
	}
	// What was pasted (a unique URL inside the report) is nowhere but in the
	// ledger-free store files' absence of it and the log's.
	for _, f := range []string{h.dbPath, h.dbPath + "-wal"} {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("canary-verify-4b1d")) {
			t.Errorf("%s holds the pasted report", f)
		}
	}
	if strings.Contains(h.logs.String(), "canary-verify-4b1d") {
		t.Error("the log holds the pasted report")
	}
}

// The page's no-JavaScript pre-check answers a same-origin form with the
// signed answer, through the same rules as POST …/precheck; a cross-site
// post (or one naming no origin) is refused before anything is counted.
func TestPrecheckFormIsSameOriginOnly(t *testing.T) {
	h := newHarness(t, ServeAll)
	form := func(hdr map[string]string, fields string) response {
		all := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		for k, v := range hdr {
			all[k] = v
		}
		return h.do(http.MethodPost, "/precheck/page", fields, all)
	}
	good := "url=" + url.QueryEscape("https://example.com/paid") + "&op=probe&caller=" + testPayTo
	for _, c := range []struct {
		name string
		hdr  map[string]string
	}{
		{"cross-site fetch metadata", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": h.srv.URL}},
		{"same-site is not same-origin", map[string]string{"Sec-Fetch-Site": "same-site"}},
		{"other origin", map[string]string{"Origin": "https://evil.example"}},
		{"no origin at all", nil},
		{"opaque origin", map[string]string{"Origin": "null"}},
	} {
		if res := form(c.hdr, good); res.status != http.StatusForbidden || !strings.Contains(string(res.body), errCrossSite) {
			t.Errorf("%s: %d %s", c.name, res.status, res.body)
		}
	}
	res := form(map[string]string{"Origin": h.srv.URL}, good)
	if res.status != 200 || !strings.Contains(string(res.body), "In policy.") || !strings.Contains(string(res.body), "&#34;signature&#34;") {
		t.Fatalf("same-origin form: %d %s", res.status, res.body)
	}
	// The refused posts spent nothing: this was the first free call.
	if !strings.Contains(string(res.body), "&#34;free_calls_used_today&#34;: 1,") {
		t.Errorf("the refused posts were counted: %s", res.body)
	}
	// At once again: the allowance's minimum interval; the page carries the
	// paid challenge as the JSON route's answer does.
	res = form(map[string]string{"Sec-Fetch-Site": "same-origin"}, good)
	if res.status != 402 || res.header.Get("PAYMENT-REQUIRED") == "" || !strings.Contains(string(res.body), "free allowance is used up") {
		t.Errorf("exhausted form pre-check: %d %v", res.status, res.header)
	}
	h.clock.Add(10e9)
	res = form(map[string]string{"Sec-Fetch-Site": "same-origin"}, "url="+url.QueryEscape("ftp://example.com/x")+"&op=check&caller="+testPayTo)
	if res.status != 400 || !strings.Contains(string(res.body), "url_scheme") {
		t.Errorf("refused URL: %d %s", res.status, res.body)
	}
	for name, fields := range map[string]string{"duplicate field": good + "&url=x", "unknown field": good + "&URL=x", "unknown op": "url=x&op=refund"} {
		if res := form(map[string]string{"Sec-Fetch-Site": "same-origin"}, fields); res.status != 400 {
			t.Errorf("%s: %d %s", name, res.status, res.body)
		}
	}
	if res := h.do(http.MethodPost, "/precheck/page", `{"url":"x"}`, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}); res.status != 415 {
		t.Errorf("JSON to the form route: %d", res.status)
	}
}

// The page shows each op's price from the gate's configuration, links the
// criteria, the corpus and the machine documents, and links /status only
// when a monitor serves it.
func TestPageShowsPricesFromConfiguration(t *testing.T) {
	h := newHarness(t, ServeAll)
	page := string(h.do(http.MethodGet, "/", "", nil).body)
	for _, want := range []string{
		"$0.01 — 10000 USDC units per endpoint", "$0.02 — 20000 USDC units per endpoint",
		`href="/toll/payability/criteria"`, `href="/toll/rail-probe/corpus"`, `href="/openapi.json"`, `href="/.well-known/jwks.json"`,
		`href="/metrics"`, `<main id="main">`, `<label for="precheck-url">`, `<label for="verify-report">`,
		criteria.Payability().HonestyLine[:60], criteria.RailProbe().HonestyLine[:60],
	} {
		if !strings.Contains(page, strings.ReplaceAll(want, "'", "&#39;")) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, `href="/status"`) {
		t.Error("page links /status without a monitor")
	}
	for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`} {
		if strings.Contains(page, attr) {
			t.Errorf("page loads from another origin: %s", attr)
		}
	}

	// A changed price in the configuration is the page's price.
	h.gate.Offers["probe"] = gate.Offer{Op: "probe", Price: 30000, Description: "probe"}
	h.s.cfg.StatusPage = true
	page = string(h.do(http.MethodGet, "/toll/rail-probe/", "", nil).body)
	if !strings.Contains(page, "$0.03 — 30000 USDC units per endpoint") || strings.Contains(page, "10000 USDC") {
		t.Errorf("rail-probe page does not follow the configured price")
	}
	if !strings.Contains(page, `href="/status"`) {
		t.Error("page does not link /status with a monitor")
	}
	for _, p := range []string{"/static/page.css", "/static/page.js"} {
		if res := h.do(http.MethodGet, p, "", nil); res.status != 200 || len(res.body) == 0 {
			t.Errorf("%s: %d", p, res.status)
		}
	}
	for path, want := range map[string]string{"/": `{"services":["/toll/payability/","/toll/rail-probe/","/toll/x402/"],"openapi":"/openapi.json"}`,
		"/toll/rail-probe/": `{"services":["/toll/rail-probe/"],"openapi":"/openapi.json"}`} {
		res := h.do(http.MethodGet, path, "", map[string]string{"Accept": "application/json"})
		if res.status != 200 || string(res.body) != want {
			t.Errorf("GET %s as JSON: %d %s", path, res.status, res.body)
		}
	}
	if res := h.do(http.MethodGet, "/toll/payability/corpus", "", nil); res.status != 200 || !json.Valid(res.body) {
		t.Errorf("corpus: %d", res.status)
	}
}

// A single-service worker's page at / shows only that service, and its
// form pre-checks through that service's route.
func TestSingleServicePage(t *testing.T) {
	h := newHarness(t, criteria.ServiceRailProbe)
	page := string(h.do(http.MethodGet, "/", "", nil).body)
	if !strings.Contains(page, "$0.02 — 20000 USDC units per endpoint") || strings.Contains(page, "10000 USDC units") {
		t.Errorf("rail-probe worker's page shows another service's ops")
	}
	res := h.do(http.MethodPost, "/precheck/page", "url="+url.QueryEscape("https://example.com/paid")+"&caller="+testPayTo,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	if res.status != 200 || !strings.Contains(string(res.body), "&#34;precheck_op&#34;: &#34;probe&#34;") {
		t.Errorf("form pre-check on a rail-probe worker: %d %s", res.status, res.body)
	}
	if res := h.do(http.MethodPost, "/precheck/page", "url=x&op=check", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"}); res.status != 400 {
		t.Errorf("op check on a rail-probe worker's form: %d", res.status)
	}
}
