package main

import (
	"bytes"
	"encoding/hex"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsAreIndependent: the generator is an independent reading of
// x402-preflight/v1, so it imports nothing of this module; only the
// standard library and the RFC 8785 package.
func TestImportsAreIndependent(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			stdlib := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			if !stdlib && path != "github.com/gowebpki/jcs" {
				t.Errorf("%s imports %s: preflightgen imports only the standard library and github.com/gowebpki/jcs", name, path)
			}
		}
	}
}

func root(t *testing.T) string {
	t.Helper()
	r, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCommittedCorpusIsRegenerated is what -check does.
func TestCommittedCorpusIsRegenerated(t *testing.T) {
	want, err := build(root(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root(t), "internal", "corpus", corpusFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error(corpusFile + " differs from what preflightgen writes; run go run ./internal/corpus/preflightgen")
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	a, err := build(root(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := build(root(t))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs wrote different bytes")
	}
}

// TestEveryReasonAndGradeIsCovered: the corpus has a case for each reason of
// the decision table and each grade.
func TestEveryReasonAndGradeIsCovered(t *testing.T) {
	reasons, grades := map[string]bool{}, map[string]bool{}
	decisions := map[string]bool{}
	for _, c := range append(synthetic(), partialCases()...) {
		e := evaluate(c.Input)
		decisions[e.Decision] = true
		for _, r := range e.Reasons {
			reasons[r] = true
		}
		for _, p := range append(e.Probes, e.MethodMatrix...) {
			if p.Grade != nil {
				grades[*p.Grade] = true
			}
		}
	}
	for _, r := range []string{"unreachable", "not_402", "no_payable_entry", "over_budget", "fail_open", "resource_mismatch",
		"payment_not_verified", "payment_not_verified_v2", "payment_not_verified_v1", "challenge_static", "method_open", "lint_warnings", "scheme_not_probed", "cortx_unfavourable", "cortx_unverified"} {
		if !reasons[r] {
			t.Errorf("no case gives %s", r)
		}
	}
	for _, g := range []string{"FAIL-OPEN", "CLOSED", "NOT-EVALUATED", "ERRORED", "UNGRADED", "DIRTY"} {
		if !grades[g] {
			t.Errorf("no case grades %s", g)
		}
	}
	for _, d := range []string{"GO", "HOLD", "STOP"} {
		if !decisions[d] {
			t.Errorf("no case decides %s", d)
		}
	}
}

// TestPartialVerifiersFailOpenHonestSellersGo: revision 2's P1 passes every
// partial verifier (so it serves, and preflight stops), while a seller that
// checks the same and then verifies the signature refuses it (GO).
func TestPartialVerifiersFailOpenHonestSellersGo(t *testing.T) {
	n := 0
	for _, c := range partialCases() {
		in := c.Input
		in.ProbeEnv = &probeEnv{Now: corpusNow, RandomHex: hex.EncodeToString(caseStream(c.ID))}
		e, probes := evaluateWithProbes(&in)
		p1 := 0
		for _, p := range probes {
			if p.ID == "p1_structural" {
				p1++
			}
		}
		switch {
		case strings.HasPrefix(c.ID, "stop-partial-"):
			n++
			if e.Decision != "STOP" || e.Reasons[0] != "fail_open" || e.Probes[0].Grade == nil || *e.Probes[0].Grade != "FAIL-OPEN" {
				t.Errorf("%s: %s %v, P1 %v", c.ID, e.Decision, e.Reasons, e.Probes[0].Grade)
			}
		case strings.HasPrefix(c.ID, "go-"):
			if e.Decision != "GO" || p1 == 0 {
				t.Errorf("%s: %s %v with %d P1", c.ID, e.Decision, e.Reasons, p1)
			}
		}
	}
	if n != 16 {
		t.Errorf("%d partial-verifier cases, want 16 (EVM a-f and Solana d', f' in both dialects)", n)
	}
}
