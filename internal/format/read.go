package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

// MaxReadValue bounds one JSON value ReadReports accepts (a report or a scan
// record is a few kilobytes).
const MaxReadValue = 1 << 20

// ReadError is a closed-form refusal of ReadReports' input: the 1-based
// index of the value and a static reason. It never echoes the input.
type ReadError struct {
	Value  int
	Reason string
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("input value %d: %s", e.Value, e.Reason)
}

// The reasons of a ReadError.
const (
	ReadNotJSON        = "not JSON"
	ReadTooLarge       = "over 1 MiB"
	ReadNotAReport     = "not a payability report or scan record"
	ReadMixedOps       = "an op other than the first value's"
	ReadUnknownState   = "a state, grade or decision the published documents do not name"
	ReadNotOneEndpoint = "a report of many endpoints (lint --mcp); write its formats with its own --format"
)

// record is the JSON shape of one scan record (internal/scan.Record).
type record struct {
	Line    *int            `json:"line"`
	URL     string          `json:"url"`
	Report  json.RawMessage `json:"report"`
	Refused *struct {
		Rule string `json:"rule"`
	} `json:"refused"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// ReadReports reads what payability wrote as JSON, so it can be rendered in
// another format: a stream of reports (check, memo, probe, lint, preflight; one
// value or many, indented or as JSON Lines) or of scan records. Every value
// must be of one op (a scan record of a refused entry names none); the op
// is "" when no value names one. Results keep the input's order, but scan
// records (all values records) are put in their input lines' order. One value
// may be at most MaxReadValue bytes; the input as a whole is streamed.
func ReadReports(r io.Reader) (string, []Result, error) {
	lr := &valueLimit{r: r}
	dec := json.NewDecoder(lr)
	var op string
	var results []Result
	var lines []int // each value's scan line; all records: sorted by it
	allRecords := true
	for n := 1; ; n++ {
		lr.allow = dec.InputOffset() + MaxReadValue + readSlack
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			if errors.Is(err, errValueTooLarge) {
				return op, nil, &ReadError{n, ReadTooLarge}
			}
			return op, nil, &ReadError{n, ReadNotJSON}
		}
		if len(raw) > MaxReadValue {
			return op, nil, &ReadError{n, ReadTooLarge}
		}
		if hop, ok := scanHeader(raw); ok && n == 1 {
			// A scan's header record names the op and carries the texts
			// its records leave out; it is not an entry.
			op = hop
			continue
		}
		valueOp, res, line, reason := readValue(raw)
		switch {
		case reason != "":
			return op, nil, &ReadError{n, reason}
		case valueOp != "" && op != "" && valueOp != op:
			return op, nil, &ReadError{n, ReadMixedOps}
		case valueOp != "":
			op = valueOp
		}
		results = append(results, res)
		lines = append(lines, line)
		allRecords = allRecords && line > 0
	}
	if allRecords && len(results) > 1 {
		// A scan writes in completion order; its records name their input line.
		idx := make([]int, len(results))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return lines[a] - lines[b] })
		sorted := make([]Result, len(results))
		for i, j := range idx {
			sorted[i] = results[j]
		}
		results = sorted
	}
	for i := range results {
		if results[i].Op == "" {
			results[i].Op = op
		}
	}
	return op, results, nil
}

// readSlack is what the decoder may read ahead of a value's end.
const readSlack = 64 << 10

var errValueTooLarge = errors.New("format: a value is over the cap")

// valueLimit fails a read past allow bytes from the start: ReadReports moves
// allow past each value it decoded, so one value cannot make the decoder
// buffer without bound.
type valueLimit struct {
	r     io.Reader
	read  int64
	allow int64
}

func (l *valueLimit) Read(p []byte) (int, error) {
	room := l.allow - l.read
	if room <= 0 {
		return 0, errValueTooLarge
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}

// readValue maps one value; line is a scan record's input line (0 for a
// report); reason is "" when it was read.
// scanHeader reports whether raw is the header record a scan writes first
// ({"header":{"op":…,…}}) and the op it names.
func scanHeader(raw json.RawMessage) (string, bool) {
	var h struct {
		Header *struct {
			Op string `json:"op"`
		} `json:"header"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Header == nil || !knownOp(h.Header.Op) {
		return "", false
	}
	return h.Header.Op, true
}

// knownOp reports whether op is one of payability's ops (a header naming
// another is not a scan's header, so an input cannot name the op every
// format prints).
func knownOp(op string) bool {
	switch op {
	case ops.OpCheck, ops.OpMemo, ops.OpProbe, ops.OpLint, ops.OpPreflight:
		return true
	}
	return false
}

func readValue(raw json.RawMessage) (op string, res Result, line int, reason string) {
	var head struct {
		Op   *string `json:"op"`
		Line *int    `json:"line"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return "", Result{}, 0, ReadNotAReport
	}
	if head.Op != nil {
		op, res, reason := readReport(raw)
		return op, res, 0, reason
	}
	var rec record
	if head.Line == nil || *head.Line < 1 || json.Unmarshal(raw, &rec) != nil {
		return "", Result{}, 0, ReadNotAReport
	}
	line = *head.Line
	switch {
	case len(rec.Report) > 0 && !bytes.Equal(rec.Report, []byte("null")):
		op, res, reason := readReport(rec.Report)
		return op, res, line, reason
	case rec.Refused != nil:
		return "", Refused("", rec.URL, rec.Refused.Rule), line, ""
	case rec.Error != nil:
		return "", Problem("", rec.URL, rec.Error.Code), line, ""
	}
	return "", Result{}, 0, ReadNotAReport
}

func readReport(raw json.RawMessage) (string, Result, string) {
	var head struct {
		Op string `json:"op"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return "", Result{}, ReadNotAReport
	}
	switch head.Op {
	case ops.OpCheck:
		var r ops.CheckReport
		if json.Unmarshal(raw, &r) != nil {
			return "", Result{}, ReadNotAReport
		}
		if !slices.Contains(criteria.Payability().States, string(r.State)) {
			return "", Result{}, ReadUnknownState
		}
		return head.Op, FromCheck(r), ""
	case ops.OpMemo:
		var r ops.MemoReport
		if json.Unmarshal(raw, &r) != nil {
			return "", Result{}, ReadNotAReport
		}
		if !slices.Contains(criteria.Payability().MemoOp.States, string(r.State)) {
			return "", Result{}, ReadUnknownState
		}
		return head.Op, FromMemo(r), ""
	case ops.OpProbe:
		var r ops.ProbeReport
		if json.Unmarshal(raw, &r) != nil {
			return "", Result{}, ReadNotAReport
		}
		grades := append(slices.Clone(criteria.RailProbe().Grades), string(verdict.Ungraded))
		for _, g := range []verdict.RailGrade{r.Grades.Direct, r.Grades.Facilitator, r.Grades.MissingMemo, r.Grades.Bogus} {
			if !slices.Contains(grades, string(g.Grade)) {
				return "", Result{}, ReadUnknownState
			}
		}
		if r.ProbeResult.Outcome != verdict.Probed && r.ProbeResult.Outcome != verdict.NotProbed {
			return "", Result{}, ReadUnknownState
		}
		return head.Op, FromProbe(r), ""
	case ops.OpLint:
		var r ops.LintReport
		if json.Unmarshal(raw, &r) != nil {
			return "", Result{}, ReadNotAReport
		}
		var mode struct {
			Mode string `json:"mode"`
		}
		if json.Unmarshal(raw, &mode) != nil || mode.Mode != "" {
			// A lint --mcp report is one result per tool, not one
			// endpoint: refused rather than read as a clean endpoint.
			return "", Result{}, ReadNotOneEndpoint
		}
		for _, f := range r.Findings {
			if f.Severity != lint.Error && f.Severity != lint.Warn && f.Severity != lint.Info {
				return "", Result{}, ReadUnknownState
			}
		}
		return head.Op, FromLintReport(r), ""
	case ops.OpPreflight:
		var r ops.PreflightReport
		if json.Unmarshal(raw, &r) != nil {
			return "", Result{}, ReadNotAReport
		}
		res, err := FromPreflightReport(r)
		if err != nil {
			return "", Result{}, ReadUnknownState
		}
		return head.Op, res, ""
	}
	return "", Result{}, ReadNotAReport
}
