package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// The corpus shapes of docs/corpus-format.md. They are declared here again on
// purpose: gen shares no code with the module it checks.

const (
	payabilityCorpusID = "payability-corpus/v1"
	railProbeCorpusID  = "railprobe-corpus/v1"
	criteriaID         = "payability/v1"
	criteriaRevision   = "1.0.0"

	payabilityFile = "payability-corpus.v1.json"
	railProbeFile  = "railprobe-corpus.v1.json"
)

// Corpus is one corpus file. SHA256 is left out of the pinned serialization.
type Corpus struct {
	ID               string `json:"id"`
	SHA256           string `json:"sha256"`
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	Cases            []Case `json:"cases"`
}

// Case is one corpus case. Expected is one of CheckExpected, MemoExpected,
// ProbeExpected.
type Case struct {
	ID         string    `json:"id"`
	Provenance string    `json:"provenance"`
	Op         string    `json:"op"`
	Note       string    `json:"note,omitempty"`
	URL        string    `json:"url"`
	Captures   []Capture `json:"captures"`
	Expected   any       `json:"expected"`
}

// Capture is what one request observed, in the corpus form.
type Capture struct {
	Outcome    string            `json:"outcome"`
	Status     *int              `json:"status"`
	Headers    map[string]string `json:"headers,omitempty"`
	BodyText   *string           `json:"body_text,omitempty"`
	BodyBase64 *string           `json:"body_base64,omitempty"`
}

// capturedCase is the form of a case in internal/corpus/gen/captured/*.json:
// a corpus case without expected (an expected that is present is ignored and
// recomputed, never trusted).
type capturedCase struct {
	ID         string          `json:"id"`
	Provenance string          `json:"provenance"`
	Op         string          `json:"op"`
	Note       string          `json:"note"`
	URL        string          `json:"url"`
	Captures   []Capture       `json:"captures"`
	Expected   json.RawMessage `json:"expected"`
}

var (
	kebab        = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	headerName   = regexp.MustCompile(`^[a-z0-9!#$%&'*+.^_` + "`" + `|~-]+$`)
	capturesByOp = map[string]int{"check": 1, "memo": 2, "probe": 7}
	outcomes     = map[string]bool{"ok": true, "failed": true, "timeout": true, "over_cap": true, "not_sent": true}
)

// validate checks a case's shape before it is graded, so no grader ever has
// to guess what a malformed capture meant.
func validate(c Case) error {
	if c.ID == "" {
		return errors.New("case without id")
	}
	want, ok := capturesByOp[c.Op]
	if !ok {
		return fmt.Errorf("%s: unknown op %q", c.ID, c.Op)
	}
	if len(c.Captures) != want {
		return fmt.Errorf("%s: op %s needs %d captures, has %d", c.ID, c.Op, want, len(c.Captures))
	}
	if c.Provenance != "synthetic" && !strings.HasPrefix(c.Provenance, "captured:") {
		return fmt.Errorf("%s: provenance %q is neither synthetic nor captured:<implementation>@<version>", c.ID, c.Provenance)
	}
	if c.Provenance == "synthetic" && (!kebab.MatchString(c.ID) || !strings.HasPrefix(c.ID, c.Op+"-")) {
		return fmt.Errorf("%s: synthetic ids are kebab-case and start with %q", c.ID, c.Op+"-")
	}
	if c.URL == "" {
		return fmt.Errorf("%s: no url", c.ID)
	}
	for i, cp := range c.Captures {
		if !outcomes[cp.Outcome] {
			return fmt.Errorf("%s: capture %d: unknown outcome %q", c.ID, i, cp.Outcome)
		}
		if (cp.Outcome == "ok" || cp.Outcome == "over_cap") && cp.Status == nil {
			return fmt.Errorf("%s: capture %d: outcome %s needs a status", c.ID, i, cp.Outcome)
		}
		if c.Op != "probe" && cp.Outcome == "not_sent" {
			return fmt.Errorf("%s: capture %d: not_sent is a probe outcome", c.ID, i)
		}
		if cp.BodyText != nil && cp.BodyBase64 != nil {
			return fmt.Errorf("%s: capture %d: both body_text and body_base64", c.ID, i)
		}
		if cp.BodyText != nil && !utf8.ValidString(*cp.BodyText) {
			return fmt.Errorf("%s: capture %d: body_text is not UTF-8", c.ID, i)
		}
		if cp.BodyBase64 != nil {
			if _, err := base64.StdEncoding.Strict().DecodeString(*cp.BodyBase64); err != nil {
				return fmt.Errorf("%s: capture %d: body_base64 does not decode", c.ID, i)
			}
		}
		for k := range cp.Headers {
			if !headerName.MatchString(k) {
				return fmt.Errorf("%s: capture %d: header name %q is not a lower-case field name", c.ID, i, k)
			}
		}
	}
	if c.Op == "probe" {
		baselineFailed := !captureRead(c.Captures[0])
		for i, cp := range c.Captures[1:] {
			if baselineFailed != (cp.Outcome == "not_sent") {
				return fmt.Errorf("%s: capture %d: outcome %s contradicts the baseline (R9: after a failed baseline the other six are not sent, and only then)", c.ID, i+1, cp.Outcome)
			}
		}
		if c.Captures[0].Outcome == "not_sent" {
			return fmt.Errorf("%s: the baseline is always sent", c.ID)
		}
	}
	return nil
}

// loadCaptured reads every internal/corpus/gen/captured/*.json (in name
// order); the directory may be missing or empty.
func loadCaptured(dir string) ([]Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Case
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var in []capturedCase
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		for _, c := range in {
			if len(c.Expected) > 0 && string(c.Expected) != "null" {
				fmt.Fprintf(os.Stderr, "gen: %s: case %s carries expected; ignored and recomputed\n", filepath.Base(name), c.ID)
			}
			if !strings.HasPrefix(c.Provenance, "captured:") {
				return nil, fmt.Errorf("%s: case %s: provenance %q must be captured:<implementation>@<version>", filepath.Base(name), c.ID, c.Provenance)
			}
			out = append(out, Case{ID: c.ID, Provenance: c.Provenance, Op: c.Op, Note: c.Note, URL: c.URL, Captures: c.Captures})
		}
	}
	return out, nil
}

// grade computes the expected output of a case from the criteria text.
func grade(c Case) (any, error) {
	if err := validate(c); err != nil {
		return nil, err
	}
	switch c.Op {
	case "check":
		return gradeCheck(c.URL, c.Captures[0]), nil
	case "memo":
		return gradeMemo(c.Captures[0], c.Captures[1]), nil
	default:
		return gradeProbe(c.Captures), nil
	}
}

// build assembles both corpora: synthetic cases first, then captured ones,
// each case graded here. It returns the two files' bytes.
func build(capturedDir string) (payability, railProbe []byte, err error) {
	captured, err := loadCaptured(capturedDir)
	if err != nil {
		return nil, nil, err
	}
	all := append(synthetic(), captured...)
	seen := map[string]bool{}
	pc := Corpus{ID: payabilityCorpusID, CriteriaID: criteriaID, CriteriaRevision: criteriaRevision, Cases: []Case{}}
	rc := Corpus{ID: railProbeCorpusID, CriteriaID: criteriaID, CriteriaRevision: criteriaRevision, Cases: []Case{}}
	for _, c := range all {
		if seen[c.ID] {
			return nil, nil, fmt.Errorf("duplicate case id %s", c.ID)
		}
		seen[c.ID] = true
		exp, err := grade(c)
		if err != nil {
			return nil, nil, err
		}
		c.Expected = exp
		if c.Op == "probe" {
			rc.Cases = append(rc.Cases, c)
		} else {
			pc.Cases = append(pc.Cases, c)
		}
	}
	if payability, err = render(pc); err != nil {
		return nil, nil, err
	}
	if railProbe, err = render(rc); err != nil {
		return nil, nil, err
	}
	return payability, railProbe, nil
}

// render pins a corpus and writes it pretty-printed (2-space indent).
func render(c Corpus) ([]byte, error) {
	pin, err := pinOf(c)
	if err != nil {
		return nil, err
	}
	c.SHA256 = pin
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pinOf is the lower-case hex SHA-256 of the RFC 8785 canonical serialization
// of the corpus object without its sha256 field.
func pinOf(c Corpus) (string, error) {
	unpinned := struct {
		ID               string `json:"id"`
		CriteriaID       string `json:"criteria_id"`
		CriteriaRevision string `json:"criteria_revision"`
		Cases            []Case `json:"cases"`
	}{c.ID, c.CriteriaID, c.CriteriaRevision, c.Cases}
	raw, err := json.Marshal(unpinned)
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
