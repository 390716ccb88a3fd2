package corpus

import (
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/preflight"
)

// TestPreflightCorpus: pin first, then every case decides as the independent
// generator expects.
func TestPreflightCorpus(t *testing.T) {
	s, err := RunPreflight()
	if err != nil {
		t.Fatal(err)
	}
	if !s.PinOK {
		t.Fatalf("pin: file %s, computed %s", s.PinFile, s.PinComp)
	}
	if len(s.Outcomes) < 40 {
		t.Fatalf("%d cases", len(s.Outcomes))
	}
	for _, o := range s.Outcomes {
		t.Run(o.ID, func(t *testing.T) {
			if !o.Passed {
				t.Errorf("%s\n got %s\nwant %s", o.Problem, o.Got, o.Want)
			}
		})
	}
}

func TestPreflightDocumentCarriesThePin(t *testing.T) {
	doc, err := PreflightDocument()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"sha256": "`+PreflightRef().SHA256+`"`) {
		t.Error("the served document does not carry the corpus pin")
	}
	stripped, _ := criteria.WithPin(doc, strings.Repeat("0", 64))
	if string(stripped) != string(preflight.Raw()) {
		t.Error("the served document differs from the embedded one beyond the pin")
	}
}
