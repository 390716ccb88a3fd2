// Command lintgen writes the x402-lint corpus (internal/corpus/lint-corpus.v1.json).
//
// It is an independent implementation of the published rules
// (internal/lint/x402-lint.v1.json, read as a file, and docs/lint.md): it
// builds the synthetic cases (cases.go), reads the real captures of
// @x402/express and x402-express (captured/, recorded by
// tools/capture/record-lint.mjs), and computes every
// expected result with its own grader (grade.go). It imports nothing of
// this module, so the engine under test never grades itself.
//
//	go run ./internal/corpus/lintgen          # write the file
//	go run ./internal/corpus/lintgen -check   # exit 1 if the file on disk differs
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/gowebpki/jcs"
)

const outFile = "lint-corpus.v1.json"

func main() {
	check := flag.Bool("check", false, "regenerate in memory and exit non-zero if the file on disk differs")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "lintgen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	data, err := build(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, "internal", "corpus", outFile)
	if check {
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, data) {
			return errors.New(outFile + " is not what lintgen writes; run go run ./internal/corpus/lintgen")
		}
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}

type rulesDoc struct {
	ID       string `json:"id"`
	Revision string `json:"revision"`
	Corpus   struct {
		ID string `json:"id"`
	} `json:"corpus"`
	Rules []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
	} `json:"rules"`
}

type outCapture struct {
	Outcome  string            `json:"outcome"`
	Status   *int              `json:"status"`
	Headers  map[string]string `json:"headers"`
	BodyText *string           `json:"body_text"`
}

type outCase struct {
	ID         string      `json:"id"`
	Provenance string      `json:"provenance"`
	Note       string      `json:"note"`
	URL        string      `json:"url"`
	Method     string      `json:"method"`
	Now        string      `json:"now"`
	Capture    outCapture  `json:"capture"`
	Chain      []chainObs  `json:"chain"`
	Origin     *originCase `json:"origin,omitempty"`
	Expected   expected    `json:"expected"`
}

type outFileT struct {
	ID            string    `json:"id"`
	SHA256        string    `json:"sha256"`
	RulesID       string    `json:"rules_id"`
	RulesRevision string    `json:"rules_revision"`
	Cases         []outCase `json:"cases"`
}

func build(root string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(root, "internal", "lint", "x402-lint.v1.json"))
	if err != nil {
		return nil, err
	}
	var doc rulesDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	severity = map[string]string{}
	for _, r := range doc.Rules {
		severity[r.ID] = r.Severity
	}
	now, _ := time.Parse(time.RFC3339Nano, caseNow)
	var cases []outCase
	emit := func(id, prov, note, u, method string, r *resp, chain []chainObs) {
		in := input{url: u, method: method, now: now, outcome: r.outcome, status: r.status, headers: r.headers, chain: chain}
		c := outCapture{Outcome: r.outcome, Headers: map[string]string{}}
		if r.status != 0 {
			s := r.status
			c.Status = &s
		}
		for _, h := range r.headers {
			c.Headers[h[0]] = h[1]
		}
		if r.body != nil {
			in.body, in.hasBody = []byte(*r.body), true
			c.BodyText = r.body
		}
		for i := range chain {
			if chain[i].Leg == "" {
				chain[i].Leg = "header"
			}
		}
		cases = append(cases, outCase{ID: id, Provenance: prov, Note: note, URL: u, Method: method, Now: caseNow,
			Capture: c, Chain: chain, Expected: grade(in)})
	}
	for _, s := range synthetic() {
		emit("synthetic-"+s.id, "synthetic", s.note, s.url, s.method, s.r, s.chain)
	}
	for _, s := range originCases() {
		oc := s.oc
		cases = append(cases, outCase{ID: "synthetic-" + s.id, Provenance: "synthetic", Note: s.note, URL: oc.Origin, Method: "GET", Now: caseNow,
			Capture: outCapture{Outcome: "failed", Headers: map[string]string{}}, Origin: &oc, Expected: gradeOrigin(oc)})
	}
	real, err := captured(root)
	if err != nil {
		return nil, err
	}
	for _, c := range real {
		emit(c.id, c.provenance, c.note, c.url, c.method, c.r, nil)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.ID] {
			return nil, fmt.Errorf("duplicate case id %s", c.ID)
		}
		seen[c.ID] = true
	}
	f := outFileT{ID: doc.Corpus.ID, RulesID: doc.ID, RulesRevision: doc.Revision, Cases: cases}
	body, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	pin, err := pinOf(body)
	if err != nil {
		return nil, err
	}
	f.SHA256 = pin
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pinOf: SHA-256 of the RFC 8785 form of the file object without sha256.
func pinOf(b []byte) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return "", err
	}
	delete(m, "sha256")
	mb, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(mb)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

type realCase struct {
	id, provenance, note, url, method string
	r                                 *resp
}

// captured reads the real captures: the check cases recorded from
// @x402/express and x402-express (their one GET), and the lint captures of
// the interop sellers (captured/*.json, already one response per case).
func captured(root string) ([]realCase, error) {
	var out []realCase
	type capFile struct {
		ID         string `json:"id"`
		Provenance string `json:"provenance"`
		Op         string `json:"op"`
		Note       string `json:"note"`
		URL        string `json:"url"`
		Method     string `json:"method"`
		Captures   []struct {
			Outcome  string            `json:"outcome"`
			Status   int               `json:"status"`
			Headers  map[string]string `json:"headers"`
			BodyText *string           `json:"body_text"`
		} `json:"captures"`
	}
	var files []string
	fs, _ := filepath.Glob(filepath.Join(root, "internal", "corpus", "lintgen", "captured", "*.json"))
	files = append(files, fs...)
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var cs []capFile
		if err := json.Unmarshal(raw, &cs); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		for _, c := range cs {
			if c.Op != "lint" || len(c.Captures) != 1 {
				continue
			}
			cp := c.Captures[0]
			r := &resp{outcome: cp.Outcome, status: cp.Status, body: cp.BodyText}
			keys := make([]string, 0, len(cp.Headers))
			for k := range cp.Headers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				r.headers = append(r.headers, [2]string{k, cp.Headers[k]})
			}
			method := c.Method
			if method == "" {
				method = "GET"
			}
			out = append(out, realCase{id: c.ID, provenance: c.Provenance, note: c.Note, url: c.URL, method: method, r: r})
		}
	}
	return out, nil
}
