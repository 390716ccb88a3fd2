package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/reliability"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/target"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var fixedNow = func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }

// failOpenSeller challenges unpaid requests and serves any payment header.
func failOpenSeller(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PAYMENT-SIGNATURE") != "" {
			w.Write([]byte("served"))
			return
		}
		doc := `{"x402Version":2,"resource":{"url":"http://` + r.Host + `/"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x1111111111111111111111111111111111111111","maxTimeoutSeconds":60}]}`
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(doc)))
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func renderers() Renderers {
	return Renderers{
		Op: func(w io.Writer, rep ops.Report) error { _, err := io.WriteString(w, rep.Outcome()+"\n"); return err },
		Lint: func(w io.Writer, rep ops.LintReport) error {
			_, err := io.WriteString(w, rep.Outcome()+"\n")
			return err
		},
		Preflight:   func(w io.Writer, rep ops.PreflightReport) { io.WriteString(w, rep.Summary+"\n") },
		Reliability: reliability.Render,
	}
}

// connect runs the server in-process and returns a session of the SDK's own
// client; both end with the test.
func connect(t *testing.T, cfg Config) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(cfg).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		cancel()
	})
	return cs
}

func loopbackConfig() Config {
	return Config{Runner: ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: "payability/test"}), Now: fixedNow},
		Render: renderers()}
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}

func TestToolsListedWithSchemasAndHonestAnnotations(t *testing.T) {
	cs := connect(t, loopbackConfig())
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v", tool.Name, a)
			continue
		}
		// Tools that may POST to a seller (payment probes, a gated POST) are
		// not read-only: a seller that fails open acts on them.
		posts := tool.Name == ToolPreflight || tool.Name == ToolProbe || tool.Name == ToolLint
		if a.ReadOnlyHint == posts {
			t.Errorf("%s: readOnlyHint %v", tool.Name, a.ReadOnlyHint)
		}
		local := tool.Name == ToolTermsHash || tool.Name == ToolVerifyReport
		if *a.OpenWorldHint == local {
			t.Errorf("%s: openWorldHint %v", tool.Name, *a.OpenWorldHint)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		for _, banned := range []string{"allow_private", "allowPrivate", "key", "sign", "cortx_api", "api"} {
			if strings.Contains(string(schema), `"`+banned+`"`) {
				t.Errorf("%s: input schema has %q: server configuration must not be an argument", tool.Name, banned)
			}
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
	}
	sort.Strings(names)
	want := []string{ToolCheck, ToolLint, ToolMemo, ToolPreflight, ToolProbe, ToolReliability, ToolTermsHash, ToolVerifyReport}
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestPreflightToolIsTheCLIRecord(t *testing.T) {
	srv := failOpenSeller(t)
	cs := connect(t, loopbackConfig())
	res := call(t, cs, ToolPreflight, map[string]any{"url": srv.URL + "/"})
	if res.IsError {
		t.Fatalf("isError: %s", text(res))
	}
	m := structured(t, res)
	if m["document"] != "x402-preflight/v1" || m["decision"] != "STOP" {
		t.Fatalf("record %v", m)
	}
	reasons, _ := json.Marshal(m["reasons"])
	if !strings.Contains(string(reasons), `"fail_open"`) || !strings.HasPrefix(text(res), "STOP: do not pay (") {
		t.Errorf("reasons %s, text %q", reasons, text(res))
	}
	// Same op, same clock, same seller: the structured output is ops' record.
	rep, err := loopbackConfig().Runner.Preflight(context.Background(), ops.PreflightRequest{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(rep)
	got, _ := json.Marshal(res.StructuredContent)
	if !bytes.Equal(canon(t, want), canon(t, got)) {
		t.Errorf("structured output differs from the op's record\n got %s\nwant %s", got, want)
	}
}

func canon(t *testing.T, b []byte) []byte {
	t.Helper()
	c, err := report.Canonical(json.RawMessage(b))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestToolFailuresNameTheArgument(t *testing.T) {
	cs := connect(t, loopbackConfig())
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolPreflight, map[string]any{"url": "ftp://seller.example/"}, "url: refused by the target-URL policy"},
		{ToolPreflight, map[string]any{"url": "https://seller.example/", "method": "PUT"}, "method: must be GET or POST"},
		{ToolPreflight, map[string]any{"url": "https://seller.example/", "network": "base"}, "network: must be a CAIP-2"},
		{ToolPreflight, map[string]any{"url": "https://seller.example/", "max_amount": "-1"}, "max_amount: must be a decimal integer"},
		{ToolPreflight, map[string]any{"url": "https://seller.example/", "service_id": "../x"}, "service_id: is not a CORTX service id"},
		{ToolPreflight, map[string]any{"url": "https://seller.example/", "body": "{"}, "body: is not JSON"},
		{ToolPreflight, map[string]any{"url": 7}, "url"},
		{ToolCheck, map[string]any{"url": "ftp://seller.example/"}, "url: refused by the target-URL policy"},
		{ToolReliability, map[string]any{"intended_url": "https://seller.example/"}, `"service_id"`},
		{ToolTermsHash, map[string]any{"challenge": "not a challenge"}, "challenge: is neither"},
		{ToolVerifyReport, map[string]any{"report": "{}"}, "jwks: give the signer's key set"},
		{ToolVerifyReport, map[string]any{"report": "[]", "jwks": "{}"}, "report: not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.want, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("isError %v, text %q, want %q", res.IsError, text(res), tt.want)
			}
		})
	}
}

func TestPrivateTargetsNeedTheServerFlag(t *testing.T) {
	srv := failOpenSeller(t)
	cfg := loopbackConfig()
	cfg.Runner.Fetcher = target.New(target.Options{UserAgent: "payability/test"}) // the guard, as without --allow-private
	cs := connect(t, cfg)
	res := call(t, cs, ToolPreflight, map[string]any{"url": srv.URL + "/", "allow_private": true})
	if !res.IsError || !strings.Contains(text(res), "allow_private") {
		t.Errorf("an allow_private argument was taken: %q", text(res))
	}
	res = call(t, cs, ToolPreflight, map[string]any{"url": srv.URL + "/"})
	m := structured(t, res)
	if m["decision"] != "STOP" || !strings.Contains(text(res), "unreachable") || m["fetch_error"] != "address_refused" {
		t.Errorf("a guarded server reached loopback: %v", m)
	}
}

func TestSignedPreflightVerifiesWithTheServerKey(t *testing.T) {
	key, err := report.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ks := report.NewKeySet(key)
	cfg := loopbackConfig()
	cfg.Key, cfg.Keys = &key, &ks
	cs := connect(t, cfg)
	res := call(t, cs, ToolPreflight, map[string]any{"url": failOpenSeller(t).URL + "/"})
	rec, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(rec), `"signature"`) {
		t.Fatalf("record not signed: %s", rec)
	}
	v := call(t, cs, ToolVerifyReport, map[string]any{"report": string(rec)})
	if m := structured(t, v); m["verified"] != true || m["kid"] != key.Kid {
		t.Errorf("verify %v", m)
	}
	jwks, _ := report.MarshalJWKS(ks)
	tampered := strings.Replace(string(rec), `"STOP"`, `"GO"`, 1)
	v = call(t, cs, ToolVerifyReport, map[string]any{"report": tampered, "jwks": string(jwks)})
	if m := structured(t, v); m["verified"] != false || m["error"] != "bad_signature" {
		t.Errorf("tampered verify %v", m)
	}
}

func TestTermsHashTool(t *testing.T) {
	cs := connect(t, loopbackConfig())
	doc := `{"x402Version":2,"resource":{"url":"https://seller.example/api"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60}]}`
	res := call(t, cs, ToolTermsHash, map[string]any{"challenge": base64.StdEncoding.EncodeToString([]byte(doc))})
	m := structured(t, res)
	es, _ := m["entries"].([]any)
	if res.IsError || len(es) != 1 || es[0].(map[string]any)["terms_sha256"] == nil {
		t.Errorf("entries %v", m)
	}
}

func TestLintToolRunsTheOp(t *testing.T) {
	srv := failOpenSeller(t)
	cs := connect(t, loopbackConfig())
	res := call(t, cs, ToolLint, map[string]any{"url": srv.URL + "/"})
	m := structured(t, res)
	if res.IsError || m["op"] != "lint" || m["rules"] == nil || text(res) == "" {
		t.Errorf("lint %v %q", m, text(res))
	}
	res = call(t, cs, ToolLint, map[string]any{"url": srv.URL + "/", "method": "DELETE"})
	if !res.IsError || !strings.Contains(text(res), "method: must be GET or POST") {
		t.Errorf("bad method: %q", text(res))
	}
}

func TestCheckToolRunsTheOp(t *testing.T) {
	srv := failOpenSeller(t)
	cs := connect(t, loopbackConfig())
	res := call(t, cs, ToolCheck, map[string]any{"url": srv.URL + "/"})
	m := structured(t, res)
	if res.IsError || m["op"] != "check" || m["state"] == nil || text(res) == "" {
		t.Errorf("check %v %q", m, text(res))
	}
}

// TestRegistryFile: server.json at the repository root names this server and
// its version, within the registry's limits.
func TestRegistryFile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Version != buildinfo.Version || s.Name != "io.github.exchangerebel/payability" || len(s.Description) > 100 || s.Schema == "" {
		t.Errorf("server.json %+v", s)
	}
}
