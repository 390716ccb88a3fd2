package criteria

import (
	"strings"
	"testing"
	"time"
)

func replacerLine(line, state, end string) string {
	return strings.NewReplacer(holeState, state, holeEnd, end).Replace(line)
}

// The cut line renders what strings.Replacer rendered, on the published
// lines and on odd ones (issue 23: the verdict lines' bytes are unchanged).
func TestLineTemplateMatchesReplacer(t *testing.T) {
	end := time.Date(2026, 12, 1, 23, 59, 59, 123e6, time.UTC)
	for _, state := range []string{"POPULATED", "BOUND", "", "<STATE>", "<check-end UTC>", "a<b"} {
		if got, want := CheckLine(state, end), replacerLine(payability().VerdictGrammar.Line, state, Timestamp(end)); got != want {
			t.Errorf("check %q: got %q, want %q", state, got, want)
		}
		if got, want := MemoLine(state, end), replacerLine(payability().MemoOp.VerdictGrammar.Line, state, Timestamp(end)); got != want {
			t.Errorf("memo %q: got %q, want %q", state, got, want)
		}
	}
	for _, line := range []string{"", "x", "<STATE>", "<STATE><STATE>", "<check-end UTC><STATE>", "<STATE", "<<STATE>>", "a <STATE> b <check-end UTC> c <STATE>", "<check-end UTC"} {
		if got, want := compileLine(line, holeState, holeEnd).render("S", "E"), replacerLine(line, "S", "E"); got != want {
			t.Errorf("line %q: got %q, want %q", line, got, want)
		}
	}
}

func FuzzLineTemplateMatchesReplacer(f *testing.F) {
	f.Add("a <STATE> b <check-end UTC> c", "POPULATED", "2026-12-01T00:00:00.000Z")
	f.Add("<STATE<STATE>>", "<STATE>", "")
	f.Fuzz(func(t *testing.T, line, state, end string) {
		if got, want := compileLine(line, holeState, holeEnd).render(state, end), replacerLine(line, state, end); got != want {
			t.Fatalf("line %q state %q end %q: got %q, want %q", line, state, end, got, want)
		}
	})
}

func BenchmarkCheckLine(b *testing.B) {
	end := time.Now()
	b.Run("replacer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = replacerLine(payability().VerdictGrammar.Line, "POPULATED", Timestamp(end))
		}
	})
	b.Run("template", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = CheckLine("POPULATED", end)
		}
	})
}
