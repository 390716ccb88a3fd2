package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// conformingRequired is the x402 MCP transport's own example requirement
// (specs/transports-v2/mcp.md, "Payment Required Signaling").
const conformingRequired = `{"x402Version":2,"error":"Payment required to access this resource",` +
	`"resource":{"url":"mcp://tool/financial_analysis","description":"Advanced financial analysis tool","mimeType":"application/json"},` +
	`"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e",` +
	`"payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`

// brokenRequired has no amount in its entry, and the server sends it in
// structuredContent only.
const brokenRequired = `{"x402Version":2,"resource":{"url":"mcp://tool/broken"},` +
	`"accepts":[{"scheme":"exact","network":"eip155:84532","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e",` +
	`"payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`

// mcpSeller is a loopback MCP server built with the go-sdk that sells two
// tools over x402 (one conforming, one not) and gives one away. It counts
// the calls that carried a payment (none may).
func mcpSeller(t *testing.T) (url string, paidCalls *int) {
	t.Helper()
	paid := new(int)
	server := sdk.NewServer(&sdk.Implementation{Name: "seller", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object"}`)
	sell := func(doc string, text bool) sdk.ToolHandler {
		return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta["x402/payment"] != nil {
				*paid++
			}
			res := &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(doc), Content: []sdk.Content{}}
			if text {
				res.Content = []sdk.Content{&sdk.TextContent{Text: doc}}
			}
			return res, nil
		}
	}
	server.AddTool(&sdk.Tool{Name: "financial_analysis", InputSchema: schema}, sell(conformingRequired, true))
	server.AddTool(&sdk.Tool{Name: "broken", InputSchema: schema}, sell(brokenRequired, false))
	server.AddTool(&sdk.Tool{Name: "echo", InputSchema: schema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "free"}}}, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", paid
}

func TestLintMCPGradesEachPaidTool(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	url, paid := mcpSeller(t)
	dir := t.TempDir()
	sarifPath := filepath.Join(dir, "mcp.sarif")
	junitPath := filepath.Join(dir, "mcp.xml")
	out, errOut, code := runCLI(t, nil, false, nil, "lint", "--mcp", url, "--allow-private",
		"--format", "sarif="+sarifPath, "--format", "junit="+junitPath)
	if code != ExitUnexpected {
		t.Fatalf("exit %d (want 3: the broken tool), stderr %q\n%s", code, errOut, out)
	}
	golden(t, "lint-mcp.txt", strings.ReplaceAll(out, url, "MCP"))
	if *paid != 0 {
		t.Errorf("%d calls carried a payment", *paid)
	}

	raw, _, _ := runCLI(t, nil, false, nil, "lint", "--mcp", url, "--allow-private", "--json")
	var rep struct {
		Mode  string `json:"mode"`
		Tools []struct {
			Name     string `json:"name"`
			Outcome  string `json:"outcome"`
			Conforms *bool  `json:"conforms"`
			Binding  *struct {
				StructuredContent bool `json:"structured_content"`
				TextContent       bool `json:"text_content"`
				Identical         bool `json:"identical"`
			} `json:"binding"`
			Findings []struct {
				Rule, Leg, Field string
			} `json:"findings"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range rep.Tools {
		s := tl.Outcome
		if tl.Conforms != nil {
			s += " conforms=" + map[bool]string{true: "yes", false: "no"}[*tl.Conforms]
		}
		for _, f := range tl.Findings {
			s += " " + f.Rule + "@" + f.Leg + ":" + f.Field
		}
		if b := tl.Binding; b != nil {
			s += " structured=" + yesNo(b.StructuredContent) + " text=" + yesNo(b.TextContent) + " identical=" + yesNo(b.Identical)
		}
		got[tl.Name] = s
	}
	want := map[string]string{
		"financial_analysis": "payment_required conforms=yes structured=yes text=yes identical=yes",
		"broken":             "payment_required conforms=no amount_missing@mcp:accepts[0].amount structured=yes text=no identical=no",
		"echo":               "no_payment_required",
	}
	if rep.Mode != "mcp" || len(got) != 3 {
		t.Errorf("mode %q, tools %v", rep.Mode, got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}

	sarif, err := os.ReadFile(sarifPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{url + "#broken", `"ruleId": "mcp/text_content_missing"`} {
		if !strings.Contains(string(sarif), want) {
			t.Errorf("SARIF lacks %q", want)
		}
	}
	junit, _ := os.ReadFile(junitPath)
	if strings.Count(string(junit), "<testsuite ") != 3 {
		t.Errorf("JUnit: want one suite per tool:\n%s", junit)
	}
	for _, f := range []string{"github", "markdown", "overall"} {
		o, _, _ := runCLI(t, nil, false, nil, "lint", "--mcp", url, "--allow-private", "--format", f)
		if !strings.Contains(o, "broken") && f != "overall" || f == "overall" && o != "fail\n" {
			t.Errorf("--format %s:\n%s", f, o)
		}
	}
}

func TestLintMCPPassesTheTargetPolicy(t *testing.T) {
	_, errOut, code := runCLI(t, nil, false, nil, "lint", "--mcp", "ftp://mcp.example/")
	if code != exitUsage || !strings.Contains(errOut, "payability: ") {
		t.Errorf("a refused scheme: exit %d, %q", code, errOut)
	}
	_, _, code = runCLI(t, nil, false, nil, "lint", "--mcp", "https://mcp.example/", "https://x.example/")
	if code != exitUsage {
		t.Errorf("--mcp with a URL: exit %d", code)
	}
}
