//go:build !quick

package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpCommands is every command line that has flags of its own.
var helpCommands = [][]string{
	{"check"}, {"memo"}, {"probe"}, {"criteria"}, {"corpus"}, {"scan"}, {"reliability"},
	{"serve"}, {"verify"}, {"ledger", "backfill"}, {"ledger", "refund"}, {"ledger", "export"},
	{"ledger", "tripwires"}, {"store", "migrate"}, {"preflight"}, {"terms-hash"}, {"mcp"}, {"lint"}, {"render"}, {"monitor"}, {"webhook", "verify"},
}

var (
	// A flag named in a usage line: "--json", "[--expect STATE]", "[-v]".
	usageFlag = regexp.MustCompile(`(?:^|[\s\[])--?([a-z][a-z-]*)`)
	// A flag line of the help: "  --expect STATE" or "  -v".
	helpFlag = regexp.MustCompile(`^  --?([a-z][a-z-]*)(?: (\S+))?$`)
)

// TestHelpIsCompleteAndTrue: -h (and "help CMD") prints the whole help once,
// on stdout, and exits 0; every flag has a placeholder that says what it
// takes and a description; the usage line names only flags that exist and,
// unless it says [flags], every flag there is.
func TestHelpIsCompleteAndTrue(t *testing.T) {
	for _, cmd := range helpCommands {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, &fakeFetcher{}, false, nil, append(cmd, "-h")...)
			if code != ExitOK || stderr != "" {
				t.Fatalf("-h: exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			if n := strings.Count(stdout, "usage: payability "+name); n != 1 {
				t.Fatalf("-h prints the usage %d times:\n%s", n, stdout)
			}
			if name == "check" {
				again, _, code := runCLI(t, &fakeFetcher{}, false, nil, "help", "check")
				if code != ExitOK || again != stdout {
					t.Errorf("help check differs from check -h (exit %d)", code)
				}
			}
			lines := strings.Split(stdout, "\n")
			usage := strings.TrimPrefix(lines[0], "usage: payability ")
			defined := map[string]bool{}
			for i, l := range lines {
				m := helpFlag.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				defined[m[1]] = true
				switch m[2] {
				case "string", "int", "value", "float", "uint", "duration":
					t.Errorf("--%s shows the placeholder %q: name what it takes", m[1], m[2])
				}
				if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "        ") || len(strings.TrimSpace(lines[i+1])) < 10 {
					t.Errorf("--%s has no description", m[1])
				}
			}
			inUsage := map[string]bool{}
			for _, m := range usageFlag.FindAllStringSubmatch(usage, -1) {
				inUsage[m[1]] = true
				if !defined[m[1]] {
					t.Errorf("the usage line names --%s, which %s does not take", m[1], name)
				}
			}
			if !strings.Contains(usage, "[flags]") {
				for f := range defined {
					if !inUsage[f] {
						t.Errorf("the usage line does not name --%s", f)
					}
				}
			}
		})
	}
}

// TestCommandsThatOpenTheStoreSayTheEnvironmentCounts: serve, ledger and
// store read PAYABILITY_<NAME>; their help says so.
func TestCommandsThatOpenTheStoreSayTheEnvironmentCounts(t *testing.T) {
	for _, cmd := range [][]string{{"serve"}, {"ledger", "export"}, {"store", "migrate"}} {
		stdout, _, _ := runCLI(t, &fakeFetcher{}, false, nil, append(cmd, "-h")...)
		if !strings.Contains(stdout, "PAYABILITY_") {
			t.Errorf("%v -h does not mention the PAYABILITY_ variables", cmd)
		}
	}
}

// TestUsageMistakesSayWhatIsWrong: a usage mistake exits 2 with one line
// naming the problem and the command line, on stderr only, and touches
// nothing (the store is not opened).
func TestUsageMistakesSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "give exactly one URL"},
		{[]string{"preflight", "a", "b"}, "give exactly one URL"},
		{[]string{"preflight", "--max-amount", "x", goldenURL}, "--max-amount must be a decimal integer of atomic units"},
		{[]string{"terms-hash", "a", "b"}, "give at most one FILE"},
		{[]string{"mcp", "--http", "0.0.0.0:1"}, "--http listens on loopback only"},
		{[]string{"memo", "a", "b"}, "give exactly one URL"},
		{[]string{"memo", "--expect-closed", goldenURL}, "flag provided but not defined: -expect-closed"},
		{[]string{"probe", "--expect", "BOUND", goldenURL}, "flag provided but not defined: -expect"},
		{[]string{"criteria", "payments"}, "payability, rail-probe, x402-lint or x402-preflight"},
		{[]string{"corpus"}, "the only subcommand is verify"},
		{[]string{"verify", "report.json"}, "give exactly one of --jwks and --key"},
		{[]string{"verify", "--jwks", "keys.json"}, "give exactly one report"},
		{[]string{"reliability", "--service-id", "x"}, "--service-id and --intended-url are required"},
		{[]string{"scan", "--op", "check", "a.txt", "b.txt"}, "give at most one input"},
		{[]string{"ledger", "refund", "ENTRY", "--tx", ledgerSig(), "--op", "refund", "--data-dir", dir}, "--op must be check, memo, probe, preflight or lint"},
		{[]string{"ledger", "export", "--from", "2026-11-01", "--data-dir", dir}, "--from and --to are required"},
		{[]string{"ledger", "tripwires", "--store", "mysql://db"}, "--store must be"},
		{[]string{"store", "migrate", "now", "--data-dir", dir}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, &fakeFetcher{}, false, nil, tt.args...)
			if code != exitUsage || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if !strings.Contains(stderr, tt.want) || strings.Count(stderr, "usage: payability") > 1 {
				t.Errorf("stderr %q; want %q and the usage once", stderr, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a usage mistake created %s", filepath.Join(dir, entries[0].Name()))
	}
}
