//go:build !quick

package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exchangerebel/payability/internal/ops"
)

func TestMCPCommandUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"a public --http needs --http-public", []string{"mcp", "--http", "0.0.0.0:0"}, exitUsage, "loopback only"},
		{"a named host is not loopback", []string{"mcp", "--http", "example.com:80"}, exitUsage, "loopback only"},
		{"off loopback needs a token", []string{"mcp", "--http", "0.0.0.0:0", "--http-public"}, exitUsage, "needs --token-env"},
		{"a token too short", []string{"mcp", "--http", "127.0.0.1:0", "--token-env", "PAYABILITY_TEST_NO_SUCH_VAR"}, exitUsage, "at least 16 characters"},
		{"an origin with a path", []string{"mcp", "--http", "127.0.0.1:0", "--allow-origin", "https://a.example/x"}, exitUsage, "--allow-origin takes an origin"},
		{"no sessions", []string{"mcp", "--max-sessions", "0"}, exitUsage, "--max-sessions"},
		{"no calls", []string{"mcp", "--max-calls", "0"}, exitUsage, "--max-calls"},
		{"no host connections", []string{"mcp", "--host-conns", "0"}, exitUsage, "--host-conns"},
		{"no arguments", []string{"mcp", "extra"}, exitUsage, "takes no arguments"},
		{"a bad key file", []string{"mcp", "--sign-key", "/nonexistent/key.pem"}, exitUsage, "--sign-key"},
		{"stdio ends when stdin closes", []string{"mcp"}, ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, loopbackFetcher(), false, nil, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d stderr %q, want %d %q", code, errOut, tt.code, tt.err)
			}
		})
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "[::1]:1": true, "localhost:9": true, "0.0.0.0:1": false, ":8080": false, "10.0.0.1:1": false, "nonsense": false} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
}

// lineWriter hands each write to a channel: the test waits for the server's
// start line instead of racing it.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	select {
	case w <- string(p):
	default:
	}
	return len(p), nil
}

func TestMCPStreamableHTTPOnLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(lineWriter, 1)
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: started,
		NewFetcher: func(bool) ops.Fetcher { return loopbackFetcher() }, Now: func() time.Time { return fixedEnd }}
	done := make(chan int, 1)
	go func() { done <- e.Run(ctx, []string{"mcp", "--http", "127.0.0.1:0"}) }()
	line := <-started
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "payability mcp: streamable HTTP on ")
	if !ok {
		t.Fatalf("start line %q", line)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: addr, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 8 {
		t.Fatalf("tools %v: %v", res, err)
	}
	cs.Close()
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d after the context ended", code)
	}
}
