package corpus

import (
	"bytes"
	"encoding/json"
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
