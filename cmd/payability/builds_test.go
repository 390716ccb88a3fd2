package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The quick build (-tags quick, released as payability) must not link what
// only the daemons use: each of these costs start-up in its own package
// initialisation (docs/performance.md, "Start-up"). Checked on the import
// graph, so a new import that drags one back in fails here, whatever the
// machine.
var daemonOnly = []string{
	"github.com/prometheus/",
	"github.com/modelcontextprotocol/",
	"github.com/jackc/",
	"github.com/riverqueue/",
	"modernc.org/",
	"google.golang.org/protobuf/",
	"encoding/gob",
	"html/template",
	"github.com/exchangerebel/payability/internal/server",
	"github.com/exchangerebel/payability/internal/mcp",
	"github.com/exchangerebel/payability/internal/store/sqlite",
	"github.com/exchangerebel/payability/internal/store/postgres",
	"github.com/exchangerebel/payability/internal/schedule",
	"github.com/exchangerebel/payability/internal/monitorhttp",
	"github.com/exchangerebel/payability/internal/ledger",
}

func deps(t *testing.T, tags ...string) []string {
	t.Helper()
	args := []string{"list", "-deps"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command("go", append(args, ".")...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

func linked(pkgs []string, prefix string) string {
	for _, p := range pkgs {
		if p == prefix || strings.HasPrefix(p, prefix) && (strings.HasSuffix(prefix, "/") || strings.HasPrefix(p, prefix+"/")) {
			return p
		}
	}
	return ""
}

func TestQuickBuildLinksNoDaemonLibrary(t *testing.T) {
	quick, full := deps(t, "quick"), deps(t)
	for _, d := range daemonOnly {
		if p := linked(quick, d); p != "" {
			t.Errorf("the quick build links %s (a daemon-only %s): find the import (go list -deps -tags quick ./cmd/payability) and move it behind a full-only command", p, d)
		}
		// The list is not vacuous: the full build does link each.
		if linked(full, d) == "" {
			t.Errorf("the full build does not link %s: remove it from daemonOnly", d)
		}
	}
}

// Ceilings on the quick build's whole package initialisation, libraries
// included (allocation counts do not move with the machine's load).
const (
	maxQuickInitAllocs = 1500
	maxQuickInitBytes  = 256 << 10
)

// builds puts the quick build as payability and the full build as
// payabilityd in one new directory, as a release archive does.
func builds(t *testing.T) (dir, quick, full string) {
	t.Helper()
	dir = t.TempDir()
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	quick, full = filepath.Join(dir, "payability"+exe), filepath.Join(dir, "payabilityd"+exe)
	for _, b := range [][]string{{"-tags", "quick", "-o", quick}, {"-o", full}} {
		cmd := exec.Command("go", append(append([]string{"build"}, b...), ".")...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", b, err, out)
		}
	}
	return dir, quick, full
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs bin with args, PATH set to path (so only what the test puts
// there is found) and nothing on stdin.
func run(t *testing.T, path, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return result{o.String(), e.String(), ee.ExitCode()}
	case err != nil:
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return result{o.String(), e.String(), 0}
}

func TestQuickAndFullBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command twice")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the hand-over is an execve on Unix; Windows runs a child (handover_other.go)")
	}
	dir, quick, full := builds(t)
	empty := t.TempDir()

	t.Run("the builds are told apart by their build tags", func(t *testing.T) {
		out, err := exec.Command("go", "version", "-m", quick).Output()
		if err != nil || !bytes.Contains(out, []byte("-tags=quick")) {
			t.Fatalf("quick build's build info lacks -tags=quick (%v):\n%s", err, out)
		}
		out, err = exec.Command("go", "version", "-m", full).Output()
		if err != nil || bytes.Contains(out, []byte("-tags=quick")) {
			t.Fatalf("full build's build info says quick (%v):\n%s", err, out)
		}
	})

	t.Run("the quick build's initialisation stays small", func(t *testing.T) {
		cmd := exec.Command(quick, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("version: %v", err)
		}
		allocs, bytes := 0, 0
		for _, r := range parseInitTrace(stderr.Bytes()) {
			allocs, bytes = allocs+r.allocs, bytes+r.bytes
		}
		// 683 allocations and 118 KB with Go 1.26, the full build 4,320 and
		// 589 KB. The import-graph test is the precise guard against a
		// daemon library; this one catches new work at initialisation.
		if allocs == 0 || allocs > maxQuickInitAllocs || bytes > maxQuickInitBytes {
			t.Fatalf("the quick build's package initialisation allocates %d bytes in %d allocations (ceiling %d, %d)", bytes, allocs, maxQuickInitBytes, maxQuickInitAllocs)
		}
	})

	t.Run("both list every command", func(t *testing.T) {
		q, f := run(t, empty, quick, "help"), run(t, empty, full, "help")
		if q != f || q.code != 0 {
			t.Fatalf("help differs:\nquick %+v\nfull  %+v", q, f)
		}
		for _, name := range []string{"serve", "monitor", "mcp", "ledger", "store", "lint", "preflight", "check"} {
			if !strings.Contains(q.stdout, "  "+name+" ") {
				t.Errorf("help lacks %s", name)
			}
		}
	})

	t.Run("a full-only command answers as the full build does", func(t *testing.T) {
		for _, args := range [][]string{
			{"serve", "-h"}, {"monitor", "-h"}, {"mcp", "-h"}, {"ledger", "-h"}, {"store", "-h"},
			{"help", "serve"}, {"serve", "--no-such-flag"}, {"store", "migrate", "--store", "nonsense:x"},
		} {
			q, f := run(t, empty, quick, args...), run(t, empty, full, args...)
			if q != f {
				t.Errorf("%v:\nquick %+v\nfull  %+v", args, q, f)
			}
		}
	})

	t.Run("the full build does the work", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "store.db")
		if r := run(t, empty, quick, "store", "migrate", "--store", "sqlite:"+db); r.code != 0 {
			t.Fatalf("store migrate: %+v", r)
		}
		if fi, err := os.Stat(db); err != nil || fi.Size() == 0 {
			t.Fatalf("store migrate made no database: %v", err)
		}
	})

	t.Run("lint --mcp goes to the full build", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/mcp"
		ln.Close() // nothing listens: the session cannot connect
		r := run(t, empty, quick, "lint", "--mcp", url, "--allow-private", "--json")
		var rep struct{ Mode, Problem string }
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Mode != "mcp" || rep.Problem != "connect_failed" {
			t.Fatalf("lint --mcp: %v %+v", err, r)
		}
	})

	t.Run("found through a symbolic link", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "payability")
		if err := os.Symlink(quick, link); err != nil {
			t.Fatal(err)
		}
		if q, f := run(t, empty, link, "serve", "-h"), run(t, empty, full, "serve", "-h"); q != f {
			t.Fatalf("through a link:\nquick %+v\nfull  %+v", q, f)
		}
	})

	t.Run("found on PATH", func(t *testing.T) {
		alone := filepath.Join(t.TempDir(), "payability")
		copyFile(t, quick, alone)
		if q, f := run(t, dir, alone, "mcp", "-h"), run(t, empty, full, "mcp", "-h"); q != f {
			t.Fatalf("on PATH:\nquick %+v\nfull  %+v", q, f)
		}
	})

	t.Run("no full build: a closed-form refusal", func(t *testing.T) {
		alone := filepath.Join(t.TempDir(), "payability")
		copyFile(t, quick, alone)
		r := run(t, empty, alone, "serve")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, `"serve" needs the full build, payabilityd`) {
			t.Fatalf("got %+v", r)
		}
		// The quick commands do not need it.
		if r := run(t, empty, alone, "version"); r.code != 0 {
			t.Fatalf("version: %+v", r)
		}
	})

	t.Run("a quick build under the full build's name is refused, not looped", func(t *testing.T) {
		d := t.TempDir()
		copyFile(t, quick, filepath.Join(d, "payability"))
		copyFile(t, quick, filepath.Join(d, "payabilityd"))
		r := run(t, empty, filepath.Join(d, "payability"), "monitor", "-h")
		if r.code != 1 || !strings.Contains(r.stderr, "which is a quick build too") {
			t.Fatalf("got %+v", r)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
