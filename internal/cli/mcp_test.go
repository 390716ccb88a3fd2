package cli

import (
	"strings"
	"testing"
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
