package criteria

import (
	"strings"
	"sync"
)

// lineTemplate is a verdict grammar line cut at its placeholders once, so
// rendering a verdict line is one concatenation instead of a
// strings.Replacer built per report (issue 23: 8 % of a same-host check
// scan). lits has one more element than holes; holes[i] is the index of the
// placeholder between lits[i] and lits[i+1].
type lineTemplate struct {
	lits  []string
	holes []int
	size  int // bytes of the literal text
}

// compileLine cuts line at every occurrence of a name, leftmost first and
// without overlap, the first of the names winning at one position: what
// strings.NewReplacer(names[0], v0, names[1], v1, …).Replace(line) replaces.
func compileLine(line string, names ...string) lineTemplate {
	var t lineTemplate
	start := 0
	for i := 0; i < len(line); {
		hole := -1
		for k, n := range names {
			if n != "" && strings.HasPrefix(line[i:], n) {
				hole = k
				break
			}
		}
		if hole < 0 {
			i++
			continue
		}
		t.lits = append(t.lits, line[start:i])
		t.holes = append(t.holes, hole)
		i += len(names[hole])
		start = i
	}
	t.lits = append(t.lits, line[start:])
	for _, l := range t.lits {
		t.size += len(l)
	}
	return t
}

// render fills the holes with vals, in the order of the names.
func (t lineTemplate) render(vals ...string) string {
	n := t.size
	for _, h := range t.holes {
		n += len(vals[h])
	}
	var b strings.Builder
	b.Grow(n)
	for i, h := range t.holes {
		b.WriteString(t.lits[i])
		b.WriteString(vals[h])
	}
	b.WriteString(t.lits[len(t.lits)-1])
	return b.String()
}

// The placeholders of the check and memo verdict grammar lines.
const (
	holeState = "<STATE>"
	holeEnd   = "<check-end UTC>"
)

// The check and memo lines are cut on first use, not at start-up.
var (
	checkLine = sync.OnceValue(func() lineTemplate {
		return compileLine(payability().VerdictGrammar.Line, holeState, holeEnd)
	})
	memoLine = sync.OnceValue(func() lineTemplate {
		return compileLine(payability().MemoOp.VerdictGrammar.Line, holeState, holeEnd)
	})
)
