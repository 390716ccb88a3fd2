package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/gowebpki/jcs"
)

// The corpus shapes of docs/corpus-format.md ("the preflight corpus"),
// declared here again on purpose: the generator shares no code with the
// module it checks.

// corpusNow is the check time every case's P1 is built at
// (2026-01-01T00:00:00Z).
const corpusNow = 1767225600

const (
	corpusID   = "x402-preflight-corpus/v1"
	documentID = "x402-preflight/v1"
	revision   = "2"
	corpusFile = "preflight-corpus.v1.json"
)

type file struct {
	ID         string  `json:"id"`
	SHA256     string  `json:"sha256"`
	DocumentID string  `json:"document_id"`
	Revision   string  `json:"revision"`
	Cases      []cases `json:"cases"`
}

type cases struct {
	ID       string    `json:"id"`
	Note     string    `json:"note"`
	URL      string    `json:"url"`
	Input    caseInput `json:"input"`
	Expected expected  `json:"expected"`
	// ExpectedProbes are the payment probes the case sends, header values
	// exactly (P1 from the case's probe_env).
	ExpectedProbes []paymentProbe `json:"expected_probes"`
}

// capture is one observation in corpus form.
type capture struct {
	Outcome  string            `json:"outcome"`
	Status   *int              `json:"status"`
	Headers  map[string]string `json:"headers,omitempty"`
	BodyText *string           `json:"body_text,omitempty"`
	Error    string            `json:"error,omitempty"`
}

func (c capture) observed() observed {
	o := observed{outcome: c.Outcome, status: statusOf(c), headers: map[string]string{}}
	for k, v := range c.Headers {
		o.headers[strings.ToLower(k)] = v
	}
	if c.BodyText != nil {
		o.body = []byte(*c.BodyText)
	}
	return o
}

// lintResult is the lint result a case gives, in x402-lint/v1's result shape.
type lintResult struct {
	Status  int `json:"status"`
	Dialect struct {
		V1Body   bool `json:"v1_body"`
		V2Header bool `json:"v2_header"`
	} `json:"dialect"`
	Entries  []lintEntry   `json:"entries"`
	Findings []lintFinding `json:"findings"`
	Conforms bool          `json:"conforms"`
}

type lintEntry struct {
	Index       int    `json:"index"`
	Leg         string `json:"leg"`
	X402Version int    `json:"x402_version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
	Errors      int    `json:"errors"`
	Warnings    int    `json:"warnings"`
}

type lintFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Leg      string `json:"leg"`
	Entry    *int   `json:"entry"`
	Field    string `json:"field"`
	Message  string `json:"message"`
}

func (l lintResult) data() lintData {
	var d lintData
	raw, _ := json.Marshal(l)
	json.Unmarshal(raw, &d)
	return d
}

// render pins the corpus and writes it with a 2-space indent.
func render(f file) ([]byte, error) {
	unpinned := struct {
		ID         string  `json:"id"`
		DocumentID string  `json:"document_id"`
		Revision   string  `json:"revision"`
		Cases      []cases `json:"cases"`
	}{f.ID, f.DocumentID, f.Revision, f.Cases}
	raw, err := json.Marshal(unpinned)
	if err != nil {
		return nil, err
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	f.SHA256 = hex.EncodeToString(sum[:])
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// build makes every case and its expected output.
func build(root string) ([]byte, error) {
	f := file{ID: corpusID, DocumentID: documentID, Revision: revision}
	seen := map[string]bool{}
	recorded, err := captured(root)
	if err != nil {
		return nil, err
	}
	for _, c := range append(append(synthetic(), partialCases()...), recorded...) {
		if seen[c.ID] {
			panic("duplicate case " + c.ID)
		}
		seen[c.ID] = true
		if c.Input.ProbeEnv == nil {
			c.Input.ProbeEnv = &probeEnv{Now: corpusNow, RandomHex: hex.EncodeToString(caseStream(c.ID))}
		}
		c.Expected, c.ExpectedProbes = evaluateWithProbes(&c.Input)
		if c.ExpectedProbes == nil {
			c.ExpectedProbes = []paymentProbe{}
		}
		f.Cases = append(f.Cases, c)
	}
	return render(f)
}
