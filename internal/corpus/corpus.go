// Package corpus embeds the published corpora, computes their pins and runs
// every case through the graders. The expected outputs inside the files are
// written by corpus/gen, an independent implementation of the criteria text.
package corpus

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"sort"

	"github.com/gowebpki/jcs"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/criteria"
)

//go:embed payability-corpus.v1.json
var payabilityRaw []byte

//go:embed railprobe-corpus.v1.json
var railProbeRaw []byte

// embedded is every embedded corpus: the service it belongs to, its file name
// (the key of generatedPins, in pins_gen.go) and its bytes. A new corpus is
// one //go:embed, one row here, and `go run ./internal/corpus/gen`, which pins
// every <name>-corpus.v<N>.json in this folder (a corpus of another shape, as
// the lint corpus, needs only its row in embeddedFiles).
var embedded = []struct {
	service string
	file    string
	raw     *[]byte
}{
	{criteria.ServicePayability, "payability-corpus.v1.json", &payabilityRaw},
	{criteria.ServiceRailProbe, "railprobe-corpus.v1.json", &railProbeRaw},
}

// Services lists the services that have an embedded corpus, in order.
func Services() []string {
	out := make([]string, len(embedded))
	for i, e := range embedded {
		out[i] = e.service
	}
	return out
}

// embeddedFiles is every embedded corpus file by name — the graders' corpora
// above, the lint corpus (lint.go) and the preflight corpus (preflight.go) —
// each of which pins_gen.go pins.
var embeddedFiles = map[string]*[]byte{
	"payability-corpus.v1.json": &payabilityRaw,
	"railprobe-corpus.v1.json":  &railProbeRaw,
	"lint-corpus.v1.json":       &lintRaw,
	"preflight-corpus.v1.json":  &preflightRaw,
}

func embeddedFile(service string) (file string, raw []byte, ok bool) {
	for _, e := range embedded {
		if e.service == service {
			return e.file, *e.raw, true
		}
	}
	return "", nil, false
}

// File is one corpus file.
type File struct {
	ID               string `json:"id"`
	SHA256           string `json:"sha256"`
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	Cases            []Case `json:"cases"`
}

// Case is one corpus case: input captures and the expected result.
type Case struct {
	ID         string          `json:"id"`
	Provenance string          `json:"provenance"`
	Op         string          `json:"op"`
	Note       string          `json:"note"`
	URL        string          `json:"url"`
	Captures   []Capture       `json:"captures"`
	Expected   json.RawMessage `json:"expected"`
}

// Capture is the corpus form of capture.Capture (docs/corpus-format.md).
type Capture struct {
	Outcome    capture.Outcome   `json:"outcome"`
	Status     *int              `json:"status"`
	Headers    map[string]string `json:"headers"`
	BodyText   *string           `json:"body_text"`
	BodyBase64 *string           `json:"body_base64"`
	// Error is a failed capture's closed-form fetch error (capture.FetchError).
	Error string `json:"error,omitempty"`

	// headerOrder is the order of the header names in the file, so that two
	// names differing only in case (one field, two values) keep the order they
	// were written in and the first one is the first value (R18) on every run.
	headerOrder []string
}

// UnmarshalJSON decodes a capture and records the order of its header names.
func (c *Capture) UnmarshalJSON(b []byte) error {
	type plain Capture
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Capture(p)
	var raw struct {
		Headers json.RawMessage `json:"headers"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Headers) == 0 || raw.Headers[0] != '{' {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Headers))
	if _, err := dec.Token(); err != nil { // '{'
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
		if !seen[name] {
			seen[name] = true
			c.headerOrder = append(c.headerOrder, name)
		}
	}
	return nil
}

// names returns the header names in file order (sorted when the capture was
// not decoded from a file).
func (c Capture) names() []string {
	if len(c.headerOrder) == len(c.Headers) {
		return c.headerOrder
	}
	names := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ToCapture converts the corpus form into the grader's input.
func (c Capture) ToCapture() (capture.Capture, error) {
	out := capture.Capture{Outcome: c.Outcome, Header: capture.Header{}, Error: capture.FetchError(c.Error)}
	if c.Status != nil {
		out.Status = *c.Status
	}
	for _, k := range c.names() {
		key := textproto.CanonicalMIMEHeaderKey(k)
		out.Header[key] = append(out.Header[key], c.Headers[k])
	}
	switch {
	case c.BodyText != nil && c.BodyBase64 != nil:
		return out, errors.New("corpus: capture has both body_text and body_base64")
	case c.BodyText != nil:
		out.Body = []byte(*c.BodyText)
	case c.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*c.BodyBase64)
		if err != nil {
			return out, errors.New("corpus: body_base64 does not decode")
		}
		out.Body = b
	}
	return out, nil
}

// Pin computes the pin of a corpus file: SHA-256 (hex) of the RFC 8785
// canonical serialization of the corpus object without its sha256 field.
func Pin(raw []byte) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("corpus: file does not parse: %w", err)
	}
	delete(obj, "sha256")
	b, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", fmt.Errorf("corpus: canonicalization failed: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Raw returns the embedded bytes of the corpus of a service.
func Raw(service string) []byte {
	_, raw, ok := embeddedFile(service)
	if !ok {
		return nil
	}
	return bytes.Clone(raw)
}

// Load parses the embedded corpus of a service.
func Load(service string) (File, error) {
	var f File
	_, raw, ok := embeddedFile(service)
	if !ok {
		return f, fmt.Errorf("corpus: unknown service %q", service)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("corpus: %s does not parse: %w", service, err)
	}
	return f, nil
}

// Ref is the corpus reference every report carries.
type Ref struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
}

// RefOf returns the corpus id and pin of a service's embedded corpus. The pin
// was computed when the corpus was generated (pins_gen.go, checked by
// `corpus/gen -check` in CI) so start-up does no work that scales with the
// corpus; Run recomputes it from the embedded bytes and fails on a mismatch.
func RefOf(service string) Ref {
	file, _, ok := embeddedFile(service)
	if !ok {
		return Ref{}
	}
	return generatedPins[file]
}

// Criteria returns the criteria document of a service as served: the
// embedded bytes with corpus.sha256 set to the pin of the embedded corpus.
func Criteria(service string) ([]byte, error) {
	return criteria.WithPin(criteria.Raw(service), RefOf(service).SHA256)
}
