package corpus

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/exchangerebel/payability/internal/criteria"
)

// TestCorpus is the main test: for each published corpus, the pin is asserted
// first, then every case runs as its own subtest.
func TestCorpus(t *testing.T) {
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		t.Run(svc, func(t *testing.T) {
			s, err := Run(svc)
			if err != nil {
				t.Fatal(err)
			}
			if !s.PinOK {
				t.Fatalf("pin drift: file says %q, recomputed %q (id %q)", s.PinFile, s.PinComp, s.ID)
			}
			if len(s.Outcomes) == 0 {
				t.Fatal("corpus has no cases")
			}
			for _, o := range s.Outcomes {
				t.Run(o.ID, func(t *testing.T) {
					if !o.Passed {
						gotC, _ := jcs.Transform(o.Got)
						wantC, _ := jcs.Transform(o.Want)
						t.Errorf("%s\n got: %s\nwant: %s", o.Problem, gotC, wantC)
					}
				})
			}
		})
	}
}

func TestServedCriteriaCarryThePins(t *testing.T) {
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		b, err := Criteria(svc)
		if err != nil {
			t.Fatalf("%s: %v", svc, err)
		}
		pin := RefOf(svc).SHA256
		if len(pin) != 64 {
			t.Fatalf("%s: pin %q", svc, pin)
		}
		if !bytes.Contains(b, []byte(`"sha256":"`+pin+`"`)) {
			t.Errorf("%s: served criteria do not carry the pin %s", svc, pin)
		}
	}
}

// Two header names differing only in case are one field with two values; the
// one written first in the file is the first value (R18), on every run.
func TestHeaderNamesKeepFileOrder(t *testing.T) {
	for _, tt := range []struct {
		doc   string
		first string
	}{
		{`{"outcome":"ok","status":402,"headers":{"payment-required":"A","PAYMENT-REQUIRED":"B","x":"1"}}`, "A"},
		{`{"outcome":"ok","status":402,"headers":{"PAYMENT-REQUIRED":"B","payment-required":"A"}}`, "B"},
	} {
		for i := 0; i < 20; i++ {
			var c Capture
			if err := json.Unmarshal([]byte(tt.doc), &c); err != nil {
				t.Fatal(err)
			}
			got, err := c.ToCapture()
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := got.Header.Get("Payment-Required"); v != tt.first || len(got.Header["Payment-Required"]) != 2 {
				t.Fatalf("%s: first value %q of %v, want %q", tt.doc, v, got.Header["Payment-Required"], tt.first)
			}
		}
	}
	c := Capture{Outcome: "ok", Headers: map[string]string{"b": "2", "a": "1"}}
	if got, _ := c.ToCapture(); len(got.Header) != 2 {
		t.Errorf("headers of a capture built in code: %v", got.Header)
	}
}

// Every embedded corpus has a pin built in (pins_gen.go), and it is the pin
// recomputed from the embedded bytes.
func TestGeneratedPinsMatchTheEmbeddedFiles(t *testing.T) {
	for name, raw := range embeddedFiles {
		pin, err := Pin(*raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := generatedPins[name]; got.SHA256 != pin || got.ID == "" {
			t.Errorf("%s: built-in ref %+v, recomputed pin %s; run go run ./internal/corpus/gen", name, got, pin)
		}
	}
	for _, svc := range Services() {
		file, _, _ := embeddedFile(svc)
		if RefOf(svc) != generatedPins[file] || embeddedFiles[file] == nil {
			t.Errorf("%s: %s is not among the pinned files", svc, file)
		}
	}
	if LintRef() != generatedPins[lintFile] || LintRef().ID == "" {
		t.Errorf("lint ref %+v", LintRef())
	}
	if PreflightRef() != generatedPins[preflightFile] || PreflightRef().ID == "" {
		t.Errorf("preflight ref %+v", PreflightRef())
	}
	if len(generatedPins) != len(embeddedFiles) {
		t.Errorf("pins_gen.go pins %d files, %d are embedded", len(generatedPins), len(embeddedFiles))
	}
}

// corpus verify fails when the built-in pin is not the recomputed one.
func TestRunFailsOnABuiltInPinMismatch(t *testing.T) {
	file, _, _ := embeddedFile(criteria.ServicePayability)
	saved := generatedPins[file]
	t.Cleanup(func() { generatedPins[file] = saved })
	generatedPins[file] = Ref{ID: saved.ID, SHA256: strings.Repeat("0", 64)}
	s, err := Run(criteria.ServicePayability)
	if err != nil {
		t.Fatal(err)
	}
	if s.PinOK || s.OK() {
		t.Fatal("a built-in pin that differs from the recomputed one passed")
	}
}

// Start-up does no work that scales with the corpus: the package has no
// init function and no package-level value computed by a call (issue 12).
func TestNoInitWork(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.Name == "init" && d.Recv == nil {
					t.Errorf("%s: func init", name)
				}
			case *ast.GenDecl:
				ast.Inspect(d, func(n ast.Node) bool {
					if _, ok := n.(*ast.CallExpr); ok {
						t.Errorf("%s:%d: a package-level value is computed by a call", name, fset.Position(n.Pos()).Line)
					}
					return true
				})
			}
		}
	}
}

// TestLintCorpus: the x402-lint corpus, pin first, then every case.
func TestLintCorpus(t *testing.T) {
	s, err := RunLint()
	if err != nil {
		t.Fatal(err)
	}
	if !s.PinOK {
		t.Fatalf("pin drift: file says %q, recomputed %q (id %q)", s.PinFile, s.PinComp, s.ID)
	}
	if len(s.Outcomes) < 100 {
		t.Fatalf("lint corpus has %d cases", len(s.Outcomes))
	}
	for _, o := range s.Outcomes {
		t.Run(o.ID, func(t *testing.T) {
			if !o.Passed {
				t.Errorf("%s\n got: %s\nwant: %s", o.Problem, o.Got, o.Want)
			}
		})
	}
}

func TestServedLintRulesCarryThePin(t *testing.T) {
	b, err := LintRules()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ID     string `json:"id"`
		Corpus struct {
			ID     string `json:"id"`
			SHA256 string `json:"sha256"`
		} `json:"corpus"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != "x402-lint/v1" || doc.Corpus.ID != LintRef().ID || doc.Corpus.SHA256 != LintRef().SHA256 || len(doc.Corpus.SHA256) != 64 {
		t.Errorf("served rules %+v, ref %+v", doc, LintRef())
	}
}

// TestLintCorpusHasRealSellers: captured cases of both reference sellers are
// in the corpus, and every one that answered 402 at its own URL has no error.
func TestLintCorpusHasRealSellers(t *testing.T) {
	f, err := LoadLint()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range f.Cases {
		if c.Provenance == "synthetic" {
			continue
		}
		seen[c.Provenance]++
		var want LintExpected
		if err := json.Unmarshal(c.Expected, &want); err != nil {
			t.Fatal(err)
		}
		// The one documented deviation (docs/lint.md, "Reference sellers"):
		// a seller configured to declare another public URL, recorded at its
		// loopback address.
		if !want.Conforms && !strings.HasSuffix(c.ID, "-resource-override") {
			t.Errorf("%s: a reference seller does not conform", c.ID)
		}
	}
	for _, p := range []string{"captured:@x402/express@2.27.0", "captured:x402-express@1.2.0"} {
		if seen[p] == 0 {
			t.Errorf("no case captured from %s (have %v)", p, seen)
		}
	}
}

// TestPassesEveryPaidService: the embedded corpora of the three paid
// services pass, and a name that is no service does not.
func TestPassesEveryPaidService(t *testing.T) {
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe, criteria.ServiceX402Preflight} {
		if !Passes(svc) {
			t.Errorf("Passes(%q) = false, want true", svc)
		}
	}
	if Passes("no-such-service") {
		t.Error("Passes(no-such-service) = true, want false")
	}
}
