package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// TestImportsAreIndependent: gen is an independent implementation of the
// criteria text, so no file of it may import this module (the graders it
// checks live there). Only the standard library and the RFC 8785 package are
// allowed.
func TestImportsAreIndependent(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files found: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/exchangerebel/payability") {
				t.Errorf("%s imports %s: gen must not import this module", name, path)
				continue
			}
			stdlib := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			if !stdlib && path != "github.com/gowebpki/jcs" {
				t.Errorf("%s imports %s: gen imports only the standard library and github.com/gowebpki/jcs", name, path)
			}
		}
	}
}

// TestCommittedCorpusIsRegenerated is what `go run ./internal/corpus/gen
// -check` does: the files on disk are exactly what gen writes.
func TestCommittedCorpusIsRegenerated(t *testing.T) {
	p, r, err := build("captured")
	if err != nil {
		t.Fatal(err)
	}
	pins, err := corpusPins("..", map[string][]byte{payabilityFile: p, railProbeFile: r})
	if err != nil {
		t.Fatal(err)
	}
	pinsSrc, err := renderPins(pins)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		want []byte
	}{{payabilityFile, p}, {railProbeFile, r}, {pinsFile, pinsSrc}} {
		got, err := os.ReadFile(filepath.Join("..", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s differs from what gen writes; run go run ./internal/corpus/gen", f.name)
		}
	}
}

// TestGenerationIsDeterministic: two runs give the same bytes.
func TestGenerationIsDeterministic(t *testing.T) {
	p1, r1, err := build("captured")
	if err != nil {
		t.Fatal(err)
	}
	p2, r2, err := build("captured")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p1, p2) || !bytes.Equal(r1, r2) {
		t.Fatal("two runs of gen wrote different bytes")
	}
}

// TestPinIsTheCanonicalHash recomputes the pin from the written bytes by the
// published definition: SHA-256 of the RFC 8785 serialization of the corpus
// object without its sha256 field.
func TestPinIsTheCanonicalHash(t *testing.T) {
	p, r, err := build("captured")
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range [][]byte{p, r} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		var have string
		_ = json.Unmarshal(obj["sha256"], &have)
		delete(obj, "sha256")
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := jcs.Transform(b)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(canon)
		if want := hex.EncodeToString(sum[:]); have != want {
			t.Errorf("%s: sha256 %q, recomputed %q", obj["id"], have, want)
		}
	}
}

// TestCoverage: the corpus reaches every published state, grade and outcome,
// and every completion rule the criteria make reachable.
func TestCoverage(t *testing.T) {
	p, r, err := build("captured")
	if err != nil {
		t.Fatal(err)
	}
	var pc, rc struct {
		Cases []struct {
			ID         string          `json:"id"`
			Provenance string          `json:"provenance"`
			Op         string          `json:"op"`
			Expected   json.RawMessage `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(p, &pc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r, &rc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	synthetic := 0
	for _, c := range append(pc.Cases, rc.Cases...) {
		if c.Provenance == "synthetic" {
			synthetic++
		}
		switch c.Op {
		case "check":
			var e CheckExpected
			_ = json.Unmarshal(c.Expected, &e)
			seen["check:"+e.State] = true
			if e.Factors.Reason != nil {
				seen["check-reason:"+*e.Factors.Reason] = true
			}
			if isTrue(e.Factors.DescriptionOverlong) {
				seen["check:description_overlong"] = true
			}
		case "memo":
			var e MemoExpected
			_ = json.Unmarshal(c.Expected, &e)
			seen["memo:"+e.State] = true
			if e.Reason != nil {
				seen["memo-reason:"+*e.Reason] = true
			}
			f := e.Factors
			for _, cl := range []*string{f.BodyMemoFormatFetch1, f.BodyMemoFormatFetch2, f.HdrMemoFormatFetch1, f.HdrMemoFormatFetch2} {
				if cl != nil {
					seen["format:"+*cl] = true
				}
			}
			seen["freshness:"+f.BodyFreshnessClass] = true
		case "probe":
			var e ProbeExpected
			_ = json.Unmarshal(c.Expected, &e)
			seen["probe:"+e.Outcome] = true
			for _, g := range []Grade{e.Grades.Direct, e.Grades.Facilitator, e.Grades.MissingMemo, e.Grades.Bogus} {
				seen["grade:"+g.Grade+"/"+g.Reason] = true
			}
			for _, x := range e.Exposures {
				seen["exposure:"+x] = true
			}
		}
	}
	want := []string{
		"check:POPULATED", "check:AMOUNTS-ONLY", "check:UNCONFIGURED", "check:HEADER-MISSING", "check:RESOURCE-MISMATCH", "check:NOT-A-402",
		"check-reason:fetch_failed", "check-reason:timeout", "check-reason:status_not_402", "check-reason:body_over_cap", "check:description_overlong",
		"memo:BOUND", "memo:MEMO-REUSED", "memo:LEG-MISMATCH", "memo:MEMO-ABSENT", "memo:NOT-A-402",
		"memo-reason:memo_absent_one_fetch", // memo_binding_not_established is unreachable (R21)
		"format:absent", "format:short", "format:prefixed-opaque", "format:opaque",
		"freshness:regenerated", "freshness:static", "freshness:not_gradable",
		"probe:PROBED", "probe:NOT-PROBED",
		"grade:PRESENT-FAIL-CLOSED/rejected_with_reason", "grade:PRESENT-FAIL-DIRTY/fail_open_2xx", "grade:PRESENT-FAIL-DIRTY/dirty_rejection",
		"grade:ABSENT/payment_never_evaluated", "grade:UNGRADED/probe_failed", "grade:UNGRADED/baseline_failed",
		"exposure:METHOD-UNPAID-2XX:GET", "exposure:METHOD-UNPAID-2XX:HEAD", "exposure:METHOD-UNPAID-2XX:POST",
		"exposure:FAIL-OPEN:direct", "exposure:FAIL-OPEN:facilitator", "exposure:FAIL-OPEN:missing_memo", "exposure:FAIL-OPEN:bogus",
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no case reaches %s", w)
		}
	}
	if synthetic < 180 {
		t.Errorf("%d synthetic cases, want at least 180", synthetic)
	}
	if n := len(pc.Cases) + len(rc.Cases); n < 200 {
		t.Errorf("%d cases in all, want at least 200", n)
	}
}

// TestCapturedCasesAreValidated: a captured file with a malformed case is
// refused, not graded by guesswork.
func TestCapturedCasesAreValidated(t *testing.T) {
	dir := t.TempDir()
	bad := `[{"id":"captured-x","provenance":"captured:demo@1.0.0","op":"check","url":"https://a.example/","captures":[{"outcome":"ok","headers":{"Payment-Required":"e30="}}]}]`
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := build(dir); err == nil {
		t.Fatal("a capture with outcome ok and no status was accepted")
	}
}

// TestMissingCapturedDirectory: gen runs before any capture exists.
func TestMissingCapturedDirectory(t *testing.T) {
	if _, _, err := build(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Fatal(err)
	}
}
