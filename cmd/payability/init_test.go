package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The test binary links every package the command links, so its own start-up
// runs every package's initialisation. Re-run with this variable set, it
// exits before any test: the child's GODEBUG=inittrace=1 output is the
// command's initialisation (plus the testing package's).
const initOnlyEnv = "PAYABILITY_INIT_ONLY"

func TestMain(m *testing.M) {
	if os.Getenv(initOnlyEnv) == "1" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Per-package ceilings on what an init may allocate. Allocation counts do
// not depend on the machine's load (clock times do); a package that parses a
// document, compiles a template or a regular expression, or builds a table
// at start-up allocates far more than this (the ones found by issue 23 did
// 220 to 980 allocations).
const (
	maxInitAllocs = 48
	maxInitBytes  = 12 << 10
)

type initRecord struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace reads `init PKG @T ms, C ms clock, B bytes, A allocs` lines.
func parseInitTrace(b []byte) []initRecord {
	var out []initRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		by, err1 := strconv.Atoi(f[7])
		al, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, initRecord{pkg: f[1], bytes: by, allocs: al})
	}
	return out
}

// No package of ours does measurable work at initialisation: documents,
// templates, patterns and query tables are built on first use (issue 23).
// Libraries whose own init does work are logged, for docs/performance.md.
func TestNoInitWork(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), initOnlyEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("init-only run: %v\n%s", err, stderr.Bytes())
	}
	recs := parseInitTrace(stderr.Bytes())
	ours := 0
	for _, r := range recs {
		if !strings.HasPrefix(r.pkg, "github.com/exchangerebel/payability/") {
			if r.allocs > maxInitAllocs || r.bytes > maxInitBytes {
				t.Logf("library init: %s %d bytes, %d allocs", r.pkg, r.bytes, r.allocs)
			}
			continue
		}
		ours++
		if r.allocs > maxInitAllocs || r.bytes > maxInitBytes {
			t.Errorf("%s: init allocates %d bytes in %d allocations (ceiling %d bytes, %d allocations): build it on first use", r.pkg, r.bytes, r.allocs, maxInitBytes, maxInitAllocs)
		}
	}
	if ours < 10 {
		t.Fatalf("only %d of our packages in the init trace: the trace format changed?\n%s", ours, stderr.Bytes())
	}
}

func TestParseInitTrace(t *testing.T) {
	in := "init a/b @0.1 ms, 0.2 ms clock, 300 bytes, 4 allocs\nnoise\ninit c @1 ms, 2 ms clock, x bytes, 1 allocs\n"
	got := parseInitTrace([]byte(in))
	if len(got) != 1 || got[0] != (initRecord{"a/b", 300, 4}) {
		t.Fatalf("got %+v", got)
	}
}
