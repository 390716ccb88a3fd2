package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/verdict"
)

// Outcome is the result of running one case.
type Outcome struct {
	ID     string
	Passed bool
	// Problem says why a case failed, in closed form (no case content).
	Problem string
	Got     json.RawMessage
	Want    json.RawMessage
}

// Summary is the result of verifying one corpus file.
type Summary struct {
	Service  string
	ID       string
	PinFile  string // the sha256 field written in the file
	PinComp  string // the pin recomputed from the file
	PinBuilt string // the pin built into this binary (pins_gen.go), which reports carry
	PinOK    bool
	Outcomes []Outcome
}

// Passed counts the cases that passed.
func (s Summary) Passed() int {
	n := 0
	for _, o := range s.Outcomes {
		if o.Passed {
			n++
		}
	}
	return n
}

// Failed counts the cases that failed.
func (s Summary) Failed() int { return len(s.Outcomes) - s.Passed() }

// OK is true when the pin matches and every case passed.
func (s Summary) OK() bool { return s.PinOK && s.Failed() == 0 && len(s.Outcomes) > 0 }

// Grade runs one case's captures through the grader of its op and returns the
// result as JSON, in the shape of the case's expected object.
func Grade(c Case) (json.RawMessage, error) {
	caps := make([]capture.Capture, len(c.Captures))
	for i, cc := range c.Captures {
		var err error
		if caps[i], err = cc.ToCapture(); err != nil {
			return nil, err
		}
	}
	var v any
	switch c.Op {
	case "check":
		if len(caps) != 1 {
			return nil, fmt.Errorf("check case has %d captures, want 1", len(caps))
		}
		v = verdict.Check(c.URL, caps[0])
	case "memo":
		if len(caps) != 2 {
			return nil, fmt.Errorf("memo case has %d captures, want 2", len(caps))
		}
		v = verdict.Memo(caps[0], caps[1])
	case "probe":
		if len(caps) != 7 {
			return nil, fmt.Errorf("probe case has %d captures, want 7", len(caps))
		}
		v = verdict.Probe(caps)
	default:
		return nil, fmt.Errorf("unknown op %q", c.Op)
	}
	return json.Marshal(v)
}

func canonical(b []byte) ([]byte, error) { return jcs.Transform(b) }

// Run verifies one service's embedded corpus: pin first, then every case.
func Run(service string) (Summary, error) {
	f, err := Load(service)
	if err != nil {
		return Summary{}, err
	}
	_, raw, _ := embeddedFile(service)
	pin, err := Pin(raw)
	if err != nil {
		return Summary{}, err
	}
	doc, _ := criteria.ForService(service)
	built := RefOf(service)
	s := Summary{Service: service, ID: f.ID, PinFile: f.SHA256, PinComp: pin, PinBuilt: built.SHA256}
	s.PinOK = f.SHA256 == pin && built.SHA256 == pin && built.ID == f.ID && f.ID == doc.Corpus.ID
	for _, c := range f.Cases {
		s.Outcomes = append(s.Outcomes, RunCase(c))
	}
	return s, nil
}

// Passes reports whether the graders of a paid service pass 100% of its
// pinned corpora, pins included: a criteria service's own corpus, or for
// x402-preflight both the x402-lint and the x402-preflight corpora (the
// rules its two ops grade by).
func Passes(service string) bool {
	runs := []func() (Summary, error){func() (Summary, error) { return Run(service) }}
	if service == criteria.ServiceX402Preflight {
		runs = []func() (Summary, error){RunLint, RunPreflight}
	}
	for _, run := range runs {
		if s, err := run(); err != nil || !s.OK() {
			return false
		}
	}
	return true
}

// RunCase grades one case and compares it with its expected output as
// canonical JSON.
func RunCase(c Case) Outcome {
	o := Outcome{ID: c.ID, Want: c.Expected}
	got, err := Grade(c)
	if err != nil {
		o.Problem = err.Error()
		return o
	}
	o.Got = got
	cg, err1 := canonical(got)
	cw, err2 := canonical(c.Expected)
	if err1 != nil || err2 != nil {
		o.Problem = "expected output is not canonicalizable"
		return o
	}
	if !bytes.Equal(cg, cw) {
		o.Problem = "result differs from expected"
		return o
	}
	o.Passed = true
	return o
}
