package scan

import (
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

func TestSummaryCountsEveryKind(t *testing.T) {
	var ta tally
	ta.init(ops.OpProbe)
	ta.start()
	ta.add(tallyKey{outcome: verdict.Probed, direct: verdict.PresentFailClosed, facilitator: verdict.Absent})
	ta.add(tallyKey{outcome: verdict.Probed, direct: verdict.PresentFailClosed, facilitator: verdict.PresentFailClosed})
	ta.add(tallyKey{outcome: verdict.NotProbed, direct: verdict.Ungraded, facilitator: verdict.Ungraded})
	ta.add(tallyKey{refused: "url_scheme"})
	ta.add(tallyKey{refused: RuleNotAString})
	ta.add(tallyKey{problem: CodeCancelled})
	s := ta.summary()
	if s.Records != 6 || s.Reports != 3 || s.Refused != 2 || s.Errors != 1 {
		t.Errorf("summary = %+v", s)
	}
	if s.Outcomes[verdict.Probed] != 2 || s.Outcomes[verdict.NotProbed] != 1 {
		t.Errorf("outcomes = %v", s.Outcomes)
	}
	if s.Direct["PRESENT-FAIL-CLOSED"] != 2 || s.Direct["UNGRADED"] != 1 || s.Facilitator["ABSENT"] != 1 {
		t.Errorf("direct = %v, facilitator = %v", s.Direct, s.Facilitator)
	}
	if _, ok := s.Direct["PRESENT-FAIL-DIRTY"]; !ok {
		t.Error("a published grade that was not seen is missing from the table (want 0)")
	}
}

func TestSummaryText(t *testing.T) {
	s := Summary{
		Op: ops.OpCheck, Records: 10, Reports: 7,
		Outcomes: map[string]int{"POPULATED": 5, "NOT-A-402": 2, "AMOUNTS-ONLY": 0, "UNCONFIGURED": 0, "HEADER-MISSING": 0, "RESOURCE-MISMATCH": 0},
		Refused:  2, RefusedBy: map[string]int{"url_userinfo": 1, "url_scheme": 1},
		Errors: 1, ErrorsBy: map[string]int{CodeCancelled: 1},
		Wall: 2 * time.Second, WallSeconds: 2, URLsPerSec: 5,
		Interrupted: true, NotStarted: 4,
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `scan --op check: 10 URLs in 2.00s (5.0 URLs/s), interrupted (4 read but not started)
  POPULATED               5
  AMOUNTS-ONLY            0
  UNCONFIGURED            0
  HEADER-MISSING          0
  RESOURCE-MISMATCH       0
  NOT-A-402               2
  refused                 2  (url_scheme 1, url_userinfo 1)
  errors                  1  (cancelled 1)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestProgressLine(t *testing.T) {
	p := Progress{Op: ops.OpCheck, Done: 50, Total: 200, Elapsed: 5 * time.Second,
		Outcomes: map[string]int{"POPULATED": 40, "NOT-A-402": 8}, Refused: 2}
	got := p.Line(0)
	want := "[#####...............] 50/200  10/s  ETA 15s  POPULATED 40  NOT-A-402 8  refused 2"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	p.Total = -1
	if got, want := p.Line(0), "50 done  10/s  POPULATED 40  NOT-A-402 8  refused 2"; got != want {
		t.Errorf("unknown total: got %q, want %q", got, want)
	}
	if got := p.Line(12); len(got) != 12 {
		t.Errorf("width not honoured: %q", got)
	}
	if _, ok := (Progress{Total: 10}).ETA(); ok {
		t.Error("an ETA before anything is done")
	}
}
