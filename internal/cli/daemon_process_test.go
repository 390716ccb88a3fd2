//go:build !quick

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// These tests run the real binary, built once into a temporary directory:
// the findings they pin (a race between processes, a signal's default
// action) only exist between processes.

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func payabilityBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "payability-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "payability")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/payability").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// daemonProc is one started process and the lines of its stderr.
type daemonProc struct {
	cmd   *exec.Cmd
	addr  string
	lines chan string
	done  chan error
}

var servingRE = regexp.MustCompile(`serving on http://(\S+)`)

// startDaemon starts the binary with args and waits for the line saying
// where it serves (the handshake: it serves from then on). A process that
// exits first fails the test with its stderr.
func startDaemon(t *testing.T, env []string, args ...string) *daemonProc {
	t.Helper()
	payabilityBinary(t)
	p, err := startDaemonErr(t, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startDaemonErr is startDaemon for any goroutine: it returns the failure.
func startDaemonErr(t *testing.T, env []string, args ...string) (*daemonProc, error) {
	p := &daemonProc{cmd: exec.Command(binPath, args...), lines: make(chan string, 256), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	var all []string
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if m := servingRE.FindStringSubmatch(line); m != nil && !found {
				found = true
				addr <- m[1]
			}
			select {
			case p.lines <- line:
			default:
			}
		}
		io.Copy(io.Discard, stderr)
		p.done <- p.cmd.Wait()
		close(p.lines)
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	})
	for {
		select {
		case a := <-addr:
			p.addr = a
			return p, nil
		case line, ok := <-p.lines:
			if !ok {
				return nil, fmt.Errorf("%v exited before serving (%v): %s", args, <-p.done, strings.Join(all, "\n"))
			}
			all = append(all, line)
		}
	}
}

// waitLine reads stderr until a line containing want (the handshake of a
// signal's handling); the process exiting first fails the test.
func (p *daemonProc) waitLine(t *testing.T, want string) {
	t.Helper()
	for line := range p.lines {
		if strings.Contains(line, want) {
			return
		}
	}
	t.Fatalf("the process exited without logging %q: %v", want, <-p.done)
}

func (p *daemonProc) get(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := http.Get("http://" + p.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// terminate sends SIGTERM and waits for a graceful exit (status 0).
func (p *daemonProc) terminate(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	for range p.lines {
	}
	if err := <-p.done; err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}

func writeMonitorConfig(t *testing.T, path, targetURL string, ids ...string) {
	t.Helper()
	var eps []string
	for _, id := range ids {
		eps = append(eps, fmt.Sprintf(`{"id": %q, "url": %q, "ops": ["check"], "every": "1h"}`, id, targetURL))
	}
	if err := os.WriteFile(path, []byte(`{"endpoints": [`+strings.Join(eps, ",")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

func loopbackTarget(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/paid"
}

// TestTwoMonitorsStartTogetherOnAFreshSQLite: two `payability monitor`
// processes started at once on a fresh SQLite file both start and become
// ready (River's migrations once raced there: one exited 1 in 5 of 6
// trials). Three trials, each on a fresh file.
func TestTwoMonitorsStartTogetherOnAFreshSQLite(t *testing.T) {
	target := loopbackTarget(t)
	for trial := range 3 {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "monitor.json")
		writeMonitorConfig(t, cfg, target, "a")
		args := []string{"monitor", "--config", cfg, "--store", "sqlite:" + filepath.Join(dir, "payability.db"),
			"--data-dir", dir, "--addr", "127.0.0.1:0", "--allow-private"}
		payabilityBinary(t)
		procs := make([]*daemonProc, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range procs {
			wg.Add(1)
			go func() { defer wg.Done(); procs[i], errs[i] = startDaemonErr(t, nil, args...) }()
		}
		wg.Wait()
		for i, p := range procs {
			if errs[i] != nil {
				t.Fatalf("trial %d: process %d did not start: %v", trial, i, errs[i])
			}
			if code, body := p.get(t, "/readyz"); code != 200 {
				t.Errorf("trial %d: process %d /readyz: %d %s", trial, i, code, body)
			}
		}
		for _, p := range procs {
			p.terminate(t)
		}
	}
}

// TestSIGHUPReloadsTheMonitor: SIGHUP makes a running monitor read its file
// again (a new endpoint appears); a bad file is refused, logged, and the
// running configuration kept; the process never dies of the signal, and
// SIGTERM still drains it to exit 0.
func TestSIGHUPReloadsTheMonitor(t *testing.T) {
	target := loopbackTarget(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "monitor.json")
	writeMonitorConfig(t, cfg, target, "a")
	p := startDaemon(t, nil, "monitor", "--config", cfg, "--data-dir", dir, "--addr", "127.0.0.1:0", "--allow-private")
	ids := func() []string {
		t.Helper()
		code, body := p.get(t, "/api/v1/endpoints")
		var v struct{ Endpoints []struct{ ID string } }
		if err := json.Unmarshal([]byte(body), &v); err != nil || code != 200 {
			t.Fatalf("GET /api/v1/endpoints: %d %v", code, err)
		}
		var out []string
		for _, e := range v.Endpoints {
			out = append(out, e.ID)
		}
		return out
	}
	if got := ids(); strings.Join(got, ",") != "a" {
		t.Fatalf("endpoints %v, want [a]", got)
	}
	writeMonitorConfig(t, cfg, target, "a", "b")
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitLine(t, "SIGHUP: configuration reloaded")
	if got := ids(); strings.Join(got, ",") != "a,b" {
		t.Fatalf("after the reload: endpoints %v, want [a b]", got)
	}
	if err := os.WriteFile(cfg, []byte(`{"endpoints": [{"id": "c", "url": "`+target+`", "ops": ["check"], "every": "31d"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitLine(t, "SIGHUP: reload refused, keeping the running configuration: config:1:")
	if got := ids(); strings.Join(got, ",") != "a,b" {
		t.Fatalf("after a refused reload: endpoints %v, want [a b]", got)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := p.get(t, path); code != 200 {
			t.Errorf("GET %s: %d", path, code)
		}
	}
	p.terminate(t)
}

// TestSIGHUPIsANoOpForServe: serve has nothing to reload; SIGHUP is logged
// and serve keeps serving (it was killed on the spot).
func TestSIGHUPIsANoOpForServe(t *testing.T) {
	dir := t.TempDir()
	p := startDaemon(t, nil, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--pay-to", wallet,
		"--token-account", account, "--solana-rpc", fakeRPC(t))
	for range 2 {
		p.cmd.Process.Signal(syscall.SIGHUP)
		p.waitLine(t, "SIGHUP: nothing to reload; still serving")
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200} {
		if code, body := p.get(t, path); code != want {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	p.terminate(t)
}
