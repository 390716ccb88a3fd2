package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/suppress"
)

// suppressFlags are --config and --write-baseline of lint, scan and render:
// the repository's suppressions (.payability.json) and its baseline
// (docs/ci.md, "Suppressions and baselines").
type suppressFlags struct {
	config        *string
	writeBaseline *string

	// resolved by load
	path         string // the configuration in force; "" when none
	cfg          *suppress.Config
	baselinePath string // the baseline read; "" when none
	baseline     *suppress.Baseline
	now          time.Time
	matcher      *suppress.Matcher
}

func addSuppressFlags(fs *flagSet) *suppressFlags {
	return &suppressFlags{
		config: fs.String("config", "", "read the suppressions and the baseline from `FILE` (default: "+suppress.FileName+
			" in the working directory or the nearest directory above it, up to the repository's root)"),
		writeBaseline: fs.String("write-baseline", "", "record every finding not suppressed by an ignore entry in the baseline `FILE` (then every one of them is baselined, so the run passes)"),
	}
}

// errNoConfig is --config naming a file that cannot be read.
var errNoConfig = errors.New("--config: the file cannot be read")

// load finds and reads the configuration and its baseline (none when
// --write-baseline is rewriting it) at the clock's now. A file that is
// refused is an error naming the file, the field and the line.
func (s *suppressFlags) load(e Env) error {
	s.now = e.now()()
	path := *s.config
	if path == "" {
		wd, err := os.Getwd()
		if err == nil {
			path = findConfig(wd)
		}
	}
	if path != "" {
		data, err := readCapped(path, suppress.MaxConfigBytes)
		if err != nil {
			if *s.config != "" {
				return errNoConfig
			}
			return fmt.Errorf("%s: the file cannot be read", path)
		}
		cfg, err := suppress.ParseConfig(data)
		if err != nil {
			return fmt.Errorf("%s:%w", path, prefixed(err))
		}
		s.path, s.cfg = path, cfg
		if cfg.Baseline != "" && *s.writeBaseline == "" {
			bp := cfg.Baseline
			if !filepath.IsAbs(bp) {
				bp = filepath.Join(filepath.Dir(path), bp)
			}
			data, err := readCapped(bp, suppress.MaxBaselineBytes)
			if err != nil {
				return fmt.Errorf("%s: the baseline file %s cannot be read", path, bp)
			}
			b, err := suppress.ParseBaseline(data)
			if err != nil {
				return fmt.Errorf("%s:%w", bp, prefixed(err))
			}
			s.baselinePath, s.baseline = bp, b
		}
	}
	s.matcher = suppress.NewMatcher(s.cfg, s.baseline, s.now)
	return nil
}

// prefixed puts a space before an error that does not start with a line.
func prefixed(err error) error {
	var se *suppress.Error
	if errors.As(err, &se) && se.Line == 0 {
		return fmt.Errorf(" %w", err)
	}
	return err
}

// findConfig returns the nearest suppress.FileName from dir up to the
// repository's root (the directory holding .git), "" when none; outside a
// repository only dir itself is looked at.
func findConfig(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, suppress.FileName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		if !inRepository(parent) {
			return ""
		}
		d = parent
	}
}

// inRepository reports whether dir or a directory above it holds .git.
func inRepository(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// readCapped reads at most limit bytes of path (one more, so the parser
// sees a file over the cap as such).
func readCapped(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// active reports whether a configuration or a baseline is in force.
func (s *suppressFlags) active() bool { return s.path != "" || *s.writeBaseline != "" }

// apply marks the findings of results; with --write-baseline it records
// them first and then marks them against the baseline just written.
func (s *suppressFlags) apply(results []format.Result) error {
	for i := range results {
		s.matcher.Apply(&results[i])
	}
	if *s.writeBaseline == "" {
		return nil
	}
	data := suppress.NewBaseline(results)
	if err := os.WriteFile(*s.writeBaseline, data, 0o644); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write the baseline: %w", err)
	}
	b, err := suppress.ParseBaseline(data)
	if err != nil {
		return fmt.Errorf("the baseline written does not read back: %w", err)
	}
	s.baselinePath, s.baseline = *s.writeBaseline, b
	s.matcher = suppress.NewMatcher(s.cfg, b, s.now)
	for i := range results {
		s.matcher.Apply(&results[i])
	}
	return nil
}

// notes are the lines that say what the suppressions did: the counts, the
// entries that expired, those that matched nothing.
func (s *suppressFlags) notes() []string {
	if !s.active() {
		return nil
	}
	sum := s.matcher.Summary()
	var out []string
	head := fmt.Sprintf("suppressions: %d findings suppressed (%d by ignore entries, %d by the baseline)", sum.Suppressed, sum.ByIgnore, sum.ByBaseline)
	if s.path != "" {
		head += " — config " + s.path
	}
	if s.baselinePath != "" {
		head += fmt.Sprintf(" — baseline %s (%d findings)", s.baselinePath, sum.Baseline)
	}
	out = append(out, head)
	for _, u := range sum.Ignores {
		switch {
		case u.Expired:
			out = append(out, fmt.Sprintf("  ignore[%d] (rule %s) expired after %s: it no longer suppresses (%d findings it names count)", u.Index, u.Rule, u.Until, u.Matched))
		case u.Matched == 0:
			out = append(out, fmt.Sprintf("  ignore[%d] (rule %s) matched no finding", u.Index, u.Rule))
		}
	}
	return out
}

// warn writes the suppressions' notes on stderr (the outputs that are not
// text have no place for them): the counts, each entry that expired or
// matched nothing.
func (s *suppressFlags) warn(e Env) {
	for _, n := range s.notes() {
		fmt.Fprintf(e.Stderr, "payability: %s\n", strings.TrimSpace(n))
	}
}

// lintJSON is a lint report with its findings marked: each suppressed one
// carries its suppression, and the summary says what the suppressions did.
type lintJSON struct {
	ops.LintReport
	Findings     []lintJSONFinding `json:"findings"`
	Suppressions suppressionsJSON  `json:"suppressions"`
}

type lintJSONFinding struct {
	lint.Finding
	Suppressed *format.Suppression `json:"suppressed,omitempty"`
}

type suppressionsJSON struct {
	Config       string `json:"config,omitempty"`
	BaselineFile string `json:"baseline_file,omitempty"`
	suppress.Summary
}

// lintMarks maps each finding of a lint report to its suppression (nil
// when none), from the marked render-side result of the same report.
func lintMarks(r ops.LintReport, res format.Result) []*format.Suppression {
	return findingMarks(r.URL, r.Findings, res)
}

// findingMarks maps each of fs (findings at url) to its suppression in the
// marked result res (nil when none).
func findingMarks(url string, fs []lint.Finding, res format.Result) []*format.Suppression {
	byFP := map[string]*format.Suppression{}
	for _, f := range res.Findings() {
		if f.Suppressed != nil {
			byFP[format.Fingerprint(res.URL, f)] = f.Suppressed
		}
	}
	out := make([]*format.Suppression, len(fs))
	for i, f := range fs {
		out[i] = byFP[format.Fingerprint(url, format.LintFinding(f))]
	}
	return out
}

// markedLint is the lint report's JSON when suppressions are in force.
func (s *suppressFlags) markedLint(r ops.LintReport, res format.Result) lintJSON {
	marks := lintMarks(r, res)
	out := lintJSON{LintReport: r, Findings: make([]lintJSONFinding, len(r.Findings)),
		Suppressions: suppressionsJSON{Config: s.path, BaselineFile: s.baselinePath, Summary: s.matcher.Summary()}}
	for i, f := range r.Findings {
		out.Findings[i] = lintJSONFinding{Finding: f, Suppressed: marks[i]}
	}
	return out
}

// originJSON is an origin lint report with its suppressed findings listed:
// each by the result it belongs to (the origin for the documents' findings,
// else the resource's URL), its rule, field and suppression.
type originJSON struct {
	ops.OriginReport
	Suppressed   []suppressedJSON `json:"suppressed"`
	Suppressions suppressionsJSON `json:"suppressions"`
}

type suppressedJSON struct {
	URL        string              `json:"url"`
	Rule       string              `json:"rule"`
	Field      string              `json:"field"`
	Suppressed *format.Suppression `json:"suppressed"`
}

// markedOrigin is the origin report's JSON when suppressions are in force.
func (s *suppressFlags) markedOrigin(r ops.OriginReport, results []format.Result) originJSON {
	out := originJSON{OriginReport: r, Suppressed: []suppressedJSON{},
		Suppressions: suppressionsJSON{Config: s.path, BaselineFile: s.baselinePath, Summary: s.matcher.Summary()}}
	for _, res := range results {
		for _, f := range res.Findings() {
			if f.Suppressed != nil {
				out.Suppressed = append(out.Suppressed, suppressedJSON{URL: res.URL, Rule: f.Rule, Field: f.Field, Suppressed: f.Suppressed})
			}
		}
	}
	return out
}

// writeLintReport writes a lint report whose render-side result res the
// suppressions have marked: text and JSON mark each suppressed finding and
// say what the suppressions did; the other formats render res.
func (o *outputFlags) writeLintReport(e Env, r ops.LintReport, res format.Result, s *suppressFlags) int {
	run := formatRun(r.Common().Op, []format.Result{res})
	run.Rules = append(run.Rules, format.ProfileRules(r.Profile)...)
	run.Baselined = s.baseline != nil
	marks := lintMarks(r, res)
	text := func(w io.Writer, _ bool) error { return renderLintMarked(w, r, marks, res, s.notes()) }
	asJSON := func(w io.Writer) error {
		if !s.active() {
			return encodeJSON(w, r)
		}
		return encodeJSON(w, s.markedLint(r, res))
	}
	if o.stdout != "text" {
		s.warn(e)
	}
	return o.writeAll(e, run, text, asJSON)
}
