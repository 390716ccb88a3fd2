package scan

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

// Summary counts what a scan did.
type Summary struct {
	Op      string `json:"op"`
	Records int    `json:"records"` // entries with a record (reports, refusals and errors)
	Reports int    `json:"reports"`
	// Outcomes counts reports by state (check, memo) or probe outcome.
	Outcomes map[string]int `json:"outcomes"`
	// Direct and Facilitator count probe reports by rail grade (probe only).
	Direct      map[string]int `json:"direct,omitempty"`
	Facilitator map[string]int `json:"facilitator,omitempty"`
	Refused     int            `json:"refused"`
	RefusedBy   map[string]int `json:"refused_by_rule"`
	Errors      int            `json:"errors"`
	ErrorsBy    map[string]int `json:"errors_by_code"`
	// NotStarted counts entries that were read but never started because the
	// scan was interrupted (entries not yet read are not counted anywhere).
	NotStarted  int           `json:"not_started"`
	Interrupted bool          `json:"interrupted"`
	Wall        time.Duration `json:"-"`
	WallSeconds float64       `json:"wall_seconds"`
	URLsPerSec  float64       `json:"urls_per_second"`
}

// tallyKey is what one record adds to the counts.
type tallyKey struct {
	outcome             string
	direct, facilitator verdict.Grade
	refused             string
	problem             string
}

// tally is the running count, shared by the writer and the progress reader.
type tally struct {
	mu          sync.Mutex
	op          string
	started     time.Time
	total       int
	outcomes    map[string]int
	direct      map[string]int
	facilitator map[string]int
	refused     map[string]int
	problems    map[string]int
	reports     int
	nRefused    int
	nProblems   int
}

func (t *tally) init(op string) {
	t.op = op
	t.total = -1
	t.outcomes = map[string]int{}
	t.direct = map[string]int{}
	t.facilitator = map[string]int{}
	t.refused = map[string]int{}
	t.problems = map[string]int{}
}

func (t *tally) start() {
	t.mu.Lock()
	t.started = time.Now()
	t.mu.Unlock()
}

func (t *tally) setTotal(n int) {
	t.mu.Lock()
	t.total = n
	t.mu.Unlock()
}

func (t *tally) add(k tallyKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case k.refused != "":
		t.refused[k.refused]++
		t.nRefused++
	case k.problem != "":
		t.problems[k.problem]++
		t.nProblems++
	default:
		t.reports++
		t.outcomes[k.outcome]++
		if t.op == ops.OpProbe {
			t.direct[string(k.direct)]++
			t.facilitator[string(k.facilitator)]++
		}
	}
}

func (t *tally) done() int { return t.reports + t.nRefused + t.nProblems }

func (t *tally) summary() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	wall := time.Since(t.started)
	s := Summary{
		Op:          t.op,
		Records:     t.done(),
		Reports:     t.reports,
		Outcomes:    withKnown(t.outcomes, outcomeOrder(t.op)),
		Refused:     t.nRefused,
		RefusedBy:   clone(t.refused),
		Errors:      t.nProblems,
		ErrorsBy:    clone(t.problems),
		Wall:        wall,
		WallSeconds: wall.Seconds(),
	}
	if t.op == ops.OpProbe {
		s.Direct = withKnown(t.direct, gradeOrder())
		s.Facilitator = withKnown(t.facilitator, gradeOrder())
	}
	if wall > 0 {
		s.URLsPerSec = float64(s.Records) / wall.Seconds()
	}
	return s
}

// Progress is a snapshot of a running scan.
type Progress struct {
	Op       string
	Done     int // entries with a record
	Total    int // entries in the input; -1 when unknown (stdin)
	Elapsed  time.Duration
	Outcomes map[string]int
	Refused  int
	Errors   int
}

func (t *tally) snapshot() Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	var el time.Duration
	if !t.started.IsZero() {
		el = time.Since(t.started)
	}
	return Progress{
		Op: t.op, Done: t.done(), Total: t.total, Elapsed: el,
		Outcomes: clone(t.outcomes), Refused: t.nRefused, Errors: t.nProblems,
	}
}

// Rate is the entries done per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done) / p.Elapsed.Seconds()
}

// ETA estimates the time left at the rate so far; false when unknown.
func (p Progress) ETA() (time.Duration, bool) {
	r := p.Rate()
	if p.Total < 0 || r <= 0 {
		return 0, false
	}
	left := p.Total - p.Done
	if left < 0 {
		left = 0
	}
	return time.Duration(float64(left) / r * float64(time.Second)).Round(time.Second), true
}

// Line renders the progress as one line of at most width columns (no
// newline): a bar when the total is known, done/total, rate, ETA and the
// counts by state.
func (p Progress) Line(width int) string {
	var b strings.Builder
	if p.Total >= 0 {
		const bar = 20
		filled := 0
		if p.Total > 0 {
			filled = min(bar, p.Done*bar/p.Total)
		}
		fmt.Fprintf(&b, "[%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat(".", bar-filled), p.Done, p.Total)
	} else {
		fmt.Fprintf(&b, "%d done", p.Done)
	}
	fmt.Fprintf(&b, "  %.0f/s", p.Rate())
	if eta, ok := p.ETA(); ok {
		fmt.Fprintf(&b, "  ETA %s", eta)
	}
	for _, k := range keysInOrder(p.Outcomes, outcomeOrder(p.Op)) {
		if n := p.Outcomes[k]; n > 0 {
			fmt.Fprintf(&b, "  %s %d", k, n)
		}
	}
	if p.Refused > 0 {
		fmt.Fprintf(&b, "  refused %d", p.Refused)
	}
	if p.Errors > 0 {
		fmt.Fprintf(&b, "  errors %d", p.Errors)
	}
	s := b.String()
	if width > 0 && len(s) > width {
		s = s[:width]
	}
	return s
}

// WriteText renders the summary for a person.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	what := "URLs"
	if s.Records == 1 {
		what = "URL"
	}
	fmt.Fprintf(&b, "scan --op %s: %d %s in %.2fs (%.1f URLs/s)", s.Op, s.Records, what, s.WallSeconds, s.URLsPerSec)
	if s.Interrupted {
		fmt.Fprintf(&b, ", interrupted (%d read but not started)", s.NotStarted)
	}
	b.WriteString("\n")
	type line struct {
		name   string
		n      int
		detail string
	}
	var lines []line
	row := func(name string, n int, detail string) { lines = append(lines, line{name, n, detail}) }
	for _, k := range keysInOrder(s.Outcomes, outcomeOrder(s.Op)) {
		row(k, s.Outcomes[k], "")
	}
	if s.Op == ops.OpProbe {
		for _, rail := range []struct {
			name string
			m    map[string]int
		}{{"direct", s.Direct}, {"facilitator", s.Facilitator}} {
			for _, g := range keysInOrder(rail.m, gradeOrder()) {
				row(rail.name+" "+g, rail.m[g], "")
			}
		}
	}
	row("refused", s.Refused, breakdown(s.RefusedBy))
	row("errors", s.Errors, breakdown(s.ErrorsBy))
	width := 0
	for _, l := range lines {
		width = max(width, len(l.name))
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "  %-*s %7d%s\n", width, l.name, l.n, l.detail)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func breakdown(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, k := range keysInOrder(m, nil) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return "  (" + strings.Join(parts, ", ") + ")"
}

// outcomeOrder is the criteria's own order of an op's states (or the probe's
// outcomes), so tables read the same way as the criteria.
func outcomeOrder(op string) []string {
	switch op {
	case ops.OpCheck:
		return criteria.Payability().States
	case ops.OpMemo:
		if m := criteria.Payability().MemoOp; m != nil {
			return m.States
		}
	case ops.OpProbe:
		return []string{verdict.Probed, verdict.NotProbed}
	case ops.OpLint:
		return []string{ops.LintConforms, ops.LintDoesNotConform}
	}
	return nil
}

func gradeOrder() []string {
	return append(append([]string(nil), criteria.RailProbe().Grades...), string(verdict.Ungraded))
}

// withKnown returns a copy of m with every name of order present (zero when
// not seen).
func withKnown(m map[string]int, order []string) map[string]int {
	out := clone(m)
	for _, k := range order {
		out[k] += 0
	}
	return out
}

// keysInOrder lists m's keys: those of order first, in that order, then any
// others sorted.
func keysInOrder(m map[string]int, order []string) []string {
	keys := make([]string, 0, len(m))
	seen := make(map[string]bool, len(order))
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

func clone(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
