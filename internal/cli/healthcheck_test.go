package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// healthServer answers GET /healthz with status and a body the command must
// never print; any other path is 404.
func healthServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte("SELLER-SECRET-BODY"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHealthcheck(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers close
	ok := healthServer(t, http.StatusOK)
	down := healthServer(t, http.StatusServiceUnavailable)
	redirect := httptest.NewServer(http.RedirectHandler(ok.URL+"/healthz", http.StatusFound))
	t.Cleanup(redirect.Close)
	closedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closedLn.Addr().String()
	closedLn.Close()
	_, okPort, _ := net.SplitHostPort(ok.Listener.Addr().String())

	for _, c := range []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"200 is healthy", nil, []string{ok.URL + "/healthz"}, ExitOK, ""},
		{"localhost is loopback", nil, []string{"http://localhost:" + okPort + "/healthz"}, ExitOK, ""},
		{"default URL from PAYABILITY_ADDR", map[string]string{"PAYABILITY_ADDR": "0.0.0.0:" + okPort}, nil, ExitOK, ""},
		{"503 is unhealthy", nil, []string{down.URL + "/healthz"}, ExitInternal, "unhealthy: status 503"},
		{"404 is unhealthy", nil, []string{ok.URL + "/nosuch"}, ExitInternal, "unhealthy: status 404"},
		{"a redirect is not followed", nil, []string{redirect.URL + "/healthz"}, ExitInternal, "unhealthy: status 302"},
		{"nothing listening", nil, []string{"http://" + closedAddr + "/healthz"}, ExitInternal, "unhealthy: refused"},
		{"default URL, nothing listening", map[string]string{"PAYABILITY_ADDR": closedAddr}, nil, ExitInternal, "unhealthy: refused"},
		{"a public host is refused", nil, []string{"http://example.com/healthz"}, exitUsage, "host must be localhost or a loopback address"},
		{"a private host is refused", nil, []string{"http://10.0.0.1/healthz"}, exitUsage, "host must be localhost or a loopback address"},
		{"https is refused", nil, []string{"https://127.0.0.1/healthz"}, exitUsage, "URL must be http://"},
		{"user information is refused", nil, []string{"http://u:p@127.0.0.1/healthz"}, exitUsage, "URL must be http://"},
		{"a bad PAYABILITY_ADDR", map[string]string{"PAYABILITY_ADDR": "8402"}, nil, exitUsage, "PAYABILITY_ADDR: not HOST:PORT"},
		{"two URLs", nil, []string{ok.URL, ok.URL}, exitUsage, "at most one URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, nil, false, c.env, append([]string{"healthcheck"}, c.args...)...)
			if code != c.code || out != "" {
				t.Fatalf("exit %d stdout %q, want exit %d and no output (stderr %q)", code, out, c.code, stderr)
			}
			if c.stderr == "" && stderr != "" || !strings.Contains(stderr, c.stderr) {
				t.Errorf("stderr %q, want %q", stderr, c.stderr)
			}
			if strings.Contains(stderr, "SELLER-SECRET-BODY") || strings.Contains(stderr, "u:p") {
				t.Errorf("stderr echoes the answer or the credentials: %q", stderr)
			}
		})
	}
}

func TestHealthURLFromAddr(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"", "http://127.0.0.1:8402/healthz"},
		{"0.0.0.0:8402", "http://127.0.0.1:8402/healthz"},
		{":9000", "http://127.0.0.1:9000/healthz"},
		{"[::]:8403", "http://127.0.0.1:8403/healthz"},
	} {
		if got, err := healthURLFromAddr(c.addr); err != nil || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.addr, got, err, c.want)
		}
	}
	for _, bad := range []string{"8402", "host:", "a:b:c"} {
		if _, err := healthURLFromAddr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The dialer's guard, as a function: only loopback addresses are dialled.
func TestLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:80": true, "127.9.9.9:1": true, "[::1]:8402": true,
		"10.0.0.1:80": false, "192.168.1.1:80": false, "[::ffff:10.0.0.1]:80": false, "93.184.216.34:80": false, "[fe80::1]:80": false, "junk": false,
	} {
		if got := loopbackOnly("tcp", addr, nil) == nil; got != want {
			t.Errorf("%s: allowed %v, want %v", addr, got, want)
		}
	}
}
