package corpus

import (
	"bytes"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/preflight"
)

//go:embed preflight-corpus.v1.json
var preflightRaw []byte

// PreflightFile is the preflight corpus: each case is a preflight.Input in
// corpus form (docs/corpus-format.md) and the decision gen computed.
type PreflightFile struct {
	ID         string          `json:"id"`
	SHA256     string          `json:"sha256"`
	DocumentID string          `json:"document_id"`
	Revision   string          `json:"revision"`
	Cases      []PreflightCase `json:"cases"`
}

// PreflightCase is one captures → decision case.
type PreflightCase struct {
	ID       string          `json:"id"`
	Note     string          `json:"note"`
	URL      string          `json:"url"`
	Input    PreflightInput  `json:"input"`
	Expected json.RawMessage `json:"expected"`
	// ExpectedProbes are the payment probes the case sends, built from its
	// probe_env: P1's exact bytes are part of the document (revision 2).
	ExpectedProbes []PaymentProbe `json:"expected_probes"`
}

// PaymentProbe is one payment probe request: its header's name and value.
type PaymentProbe struct {
	ID      string `json:"id"`
	Dialect int    `json:"dialect"`
	Method  string `json:"method"`
	Header  string `json:"header"`
	Value   string `json:"value"`
}

// PreflightInput is preflight.Input in corpus form. Lint is the lint
// result of the unpaid challenge, given as data: the preflight corpus pins
// x402-preflight/v1, not x402-lint/v1's rules.
type PreflightInput struct {
	Options preflight.Options `json:"options"`
	Lint    []struct {
		Method  string  `json:"method"`
		Capture Capture `json:"capture"`
	} `json:"lint"`
	LintResult json.RawMessage `json:"lint_result"`
	Second     *Capture        `json:"second"`
	Answers    []struct {
		ID      string  `json:"id"`
		Dialect int     `json:"dialect,omitempty"`
		Method  string  `json:"method"`
		Capture Capture `json:"capture"`
	} `json:"answers"`
	CORTX *preflight.CORTX `json:"cortx"`
	// ProbeEnv is the check time (Unix seconds) and the random stream (hex)
	// P1 draws on.
	ProbeEnv *struct {
		Now       int64  `json:"now"`
		RandomHex string `json:"random_hex"`
	} `json:"probe_env,omitempty"`
}

// PreflightRaw returns the embedded preflight corpus bytes.
func PreflightRaw() []byte { return bytes.Clone(preflightRaw) }

// preflightFile is the preflight corpus's name, its key in generatedPins.
const preflightFile = "preflight-corpus.v1.json"

// PreflightRef is the preflight corpus id and pin built into this binary
// (pins_gen.go, written by corpus/gen, checked by its -check in CI), so no
// start-up hashes the corpus; RunPreflight recomputes the pin from the
// embedded file and fails on a mismatch.
func PreflightRef() Ref { return generatedPins[preflightFile] }

// PreflightDocument is x402-preflight/v1 as served: the embedded bytes with
// corpus.sha256 set to the pin of the embedded corpus.
func PreflightDocument() ([]byte, error) {
	return criteria.WithPin(preflight.Raw(), PreflightRef().SHA256)
}

// LoadPreflight parses the embedded preflight corpus strictly.
func LoadPreflight() (PreflightFile, error) {
	var f PreflightFile
	dec := json.NewDecoder(bytes.NewReader(preflightRaw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("corpus: the preflight corpus does not parse: %w", err)
	}
	return f, nil
}

// ToInput converts a case's input into preflight.Input.
func (p PreflightInput) ToInput() (preflight.Input, error) {
	in := preflight.Input{Options: p.Options}
	for _, f := range p.Lint {
		c, err := f.Capture.ToCapture()
		if err != nil {
			return in, err
		}
		in.Lint = append(in.Lint, preflight.Fetch{Method: f.Method, Capture: c})
	}
	if len(p.LintResult) > 0 && string(p.LintResult) != "null" {
		if err := json.Unmarshal(p.LintResult, &in.LintResult); err != nil {
			return in, fmt.Errorf("corpus: lint_result does not parse")
		}
	}
	if p.Second != nil {
		c, err := p.Second.ToCapture()
		if err != nil {
			return in, err
		}
		in.Second = &c
	}
	for _, a := range p.Answers {
		c, err := a.Capture.ToCapture()
		if err != nil {
			return in, err
		}
		in.Answers = append(in.Answers, preflight.Answer{ID: a.ID, Dialect: a.Dialect, Method: a.Method, Capture: c})
	}
	in.CORTX = p.CORTX
	return in, nil
}

// GradePreflight decides one case; the result is the preflight.Result as
// JSON, the shape of the case's expected object.
func GradePreflight(c PreflightCase) (json.RawMessage, error) {
	in, err := c.Input.ToInput()
	if err != nil {
		return nil, err
	}
	return json.Marshal(preflight.Evaluate(in))
}

// PlanPreflight is the payment probes a case sends, as preflight.Plan
// builds them from the case's unpaid challenge, lint result and probe_env.
func PlanPreflight(c PreflightCase) ([]PaymentProbe, error) {
	in, err := c.Input.ToInput()
	if err != nil {
		return nil, err
	}
	out := []PaymentProbe{}
	unpaid, ok := in.Unpaid()
	if !ok || !unpaid.Capture.Responded() || unpaid.Capture.Status != 402 {
		return out, nil
	}
	env := preflight.ProbeEnv{}
	if e := c.Input.ProbeEnv; e != nil {
		raw, err := hex.DecodeString(e.RandomHex)
		if err != nil {
			return nil, errors.New("corpus: probe_env.random_hex is not hex")
		}
		env = preflight.ProbeEnv{Now: time.Unix(e.Now, 0), Rand: bytes.NewReader(raw)}
	}
	_, probes := preflight.Plan(unpaid.Capture, in.LintResult, in.Options, unpaid.Method, []byte("{}"), env)
	for _, p := range probes {
		if p.Dialect == 0 {
			continue
		}
		h := preflight.HeaderOf(p.Dialect)
		out = append(out, PaymentProbe{ID: p.ID, Dialect: p.Dialect, Method: p.Method, Header: h, Value: p.Header[h]})
	}
	return out, nil
}

// RunPreflight verifies the preflight corpus: pin first, then every case.
func RunPreflight() (Summary, error) {
	f, err := LoadPreflight()
	if err != nil {
		return Summary{}, err
	}
	pin, err := Pin(preflightRaw)
	if err != nil {
		return Summary{}, err
	}
	built := PreflightRef()
	s := Summary{Service: preflight.DocumentID, ID: f.ID, PinFile: f.SHA256, PinComp: pin, PinBuilt: built.SHA256}
	s.PinOK = f.SHA256 == pin && built.SHA256 == pin && built.ID == f.ID && f.ID == preflight.CorpusID &&
		f.DocumentID == preflight.DocumentID && f.Revision == preflight.Revision
	for _, c := range f.Cases {
		o := Outcome{ID: c.ID, Want: c.Expected}
		got, err := GradePreflight(c)
		if err != nil {
			o.Problem = err.Error()
			s.Outcomes = append(s.Outcomes, o)
			continue
		}
		o.Got = got
		cg, err1 := canonical(got)
		cw, err2 := canonical(c.Expected)
		probes, err3 := PlanPreflight(c)
		switch {
		case err1 != nil || err2 != nil:
			o.Problem = "expected output is not canonicalizable"
		case !bytes.Equal(cg, cw):
			o.Problem = "result differs from expected"
		case err3 != nil:
			o.Problem = err3.Error()
		case !reflect.DeepEqual(probes, c.ExpectedProbes):
			o.Problem = "payment probes differ from expected_probes"
		default:
			o.Passed = true
		}
		s.Outcomes = append(s.Outcomes, o)
	}
	return s, nil
}
