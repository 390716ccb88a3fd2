package corpus

import (
	"bytes"
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
