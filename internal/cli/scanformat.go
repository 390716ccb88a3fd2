package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/scan"
)

// scanSink routes a scan's output: the JSON Lines records to stdout when
// stdout's format is json and to every json=FILE; every other format is
// rendered once the scan has finished, from the records it observed (one
// render-side result per entry, in input order).
type scanSink struct {
	o         *outputFlags
	op        string
	stdout    io.Writer
	jsonFiles []*os.File
	jsonOut   io.Writer
	results   []lineResult
	worst     format.Overall // when only --fail-on needs the records
	// sup marks each result with the repository's suppressions (nil: none).
	sup *suppressFlags
}

type lineResult struct {
	line int
	res  format.Result
}

// scanSink opens the json files and returns the sink; stdout is stdout or
// --out's file.
func (o *outputFlags) scanSink(op string, stdout io.Writer) (*scanSink, error) {
	s := &scanSink{o: o, op: op, stdout: stdout}
	var ws []io.Writer
	if o.stdout == "json" {
		ws = append(ws, stdout)
	}
	for _, f := range o.files {
		if f.name != "json" {
			continue
		}
		file, err := os.Create(f.path)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("cannot create the json output: %w", errors.Unwrap(err))
		}
		s.jsonFiles = append(s.jsonFiles, file)
		ws = append(ws, file)
	}
	switch len(ws) {
	case 0:
		s.jsonOut = io.Discard
	case 1:
		s.jsonOut = ws[0]
	default:
		s.jsonOut = io.MultiWriter(ws...)
	}
	return s, nil
}

// observer is scan.Options.Observe: nil when only JSON Lines are written,
// so the scan keeps no record.
func (s *scanSink) observer() func(scan.Record) {
	rewriting := s.sup != nil && *s.sup.writeBaseline != ""
	if s.o.stdout == "json" && !s.renders() && s.o.threshold == format.FailOnNever && !rewriting && !s.suppressing() {
		return nil
	}
	if s.o.stdout == "json" && !s.renders() && !rewriting {
		// Only --fail-on (and the suppressions' counts) need the records:
		// keep the worst overall, not one result per entry.
		return func(rec scan.Record) {
			res := s.marked(recordResult(s.op, rec))
			if o := res.Overall(); rank(o) > rank(s.worst) {
				s.worst = o
			}
		}
	}
	return func(rec scan.Record) {
		s.results = append(s.results, lineResult{rec.Line, s.marked(recordResult(s.op, rec))})
	}
}

func rank(o format.Overall) int {
	switch o {
	case format.Fail:
		return 2
	case format.Warn:
		return 1
	}
	return 0
}

// renders reports whether a file format other than json was asked for.
func (s *scanSink) renders() bool {
	for _, f := range s.o.files {
		if f.name != "json" {
			return true
		}
	}
	return false
}

// recordResult maps one scan record.
func recordResult(op string, rec scan.Record) format.Result {
	switch {
	case rec.Report != nil:
		return format.FromReport(rec.Report)
	case rec.Refused != nil:
		return format.Refused(op, rec.URL, rec.Refused.Rule)
	case rec.Error != nil:
		return format.Problem(op, rec.URL, rec.Error.Code)
	}
	return format.Problem(op, rec.URL, scan.CodeInternal)
}

func (s *scanSink) close() error {
	var errs []error
	for _, f := range s.jsonFiles {
		errs = append(errs, f.Close())
	}
	s.jsonFiles = nil
	return errors.Join(errs...)
}

// finish closes the json files and renders every other format; it returns
// the overall of every entry (for --fail-on).
func (s *scanSink) finish() (format.Overall, error) {
	sort.SliceStable(s.results, func(i, j int) bool { return s.results[i].line < s.results[j].line })
	results := make([]format.Result, len(s.results))
	for i, r := range s.results {
		results[i] = r.res
	}
	if s.sup != nil && *s.sup.writeBaseline != "" {
		if err := s.sup.apply(results); err != nil {
			s.close()
			return format.Fail, err
		}
	}
	run := formatRun(s.op, results)
	run.Baselined = s.sup != nil && s.sup.baseline != nil
	if s.o.wantsSARIF() {
		run.Artifact = s.o.loadArtifact()
	}
	overall := run.Overall()
	if rank(s.worst) > rank(overall) {
		overall = s.worst // only the overall was kept
	}
	err := s.close()
	write := func(w io.Writer, name string) error {
		switch name {
		case "json":
			return nil
		case "text":
			return format.Lines(w, run.Results)
		}
		return renderRun(w, name, run, s.o.threshold)
	}
	if err == nil {
		err = write(s.stdout, s.o.stdout)
	}
	if err == nil {
		err = s.o.writeFiles(func(w io.Writer, name string) error { return write(w, name) }, "json")
	}
	return overall, err
}

// suppressing reports whether a configuration is in force.
func (s *scanSink) suppressing() bool { return s.sup != nil && s.sup.active() }

// marked is res with the suppressions' marks.
func (s *scanSink) marked(res format.Result) format.Result {
	if s.suppressing() {
		s.sup.matcher.Apply(&res)
	}
	return res
}
