package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

// memoBoundary is the memo op's boundary statement from the criteria: BOUND
// never implies that the seller's replay store was checked, so a memo report
// for people says so after the honesty line.
var memoBoundary = sync.OnceValue(func() string {
	var doc struct {
		MemoOp struct {
			BoundaryStatement string `json:"boundary_statement"`
		} `json:"memo_op"`
	}
	_ = json.Unmarshal(criteria.Raw(criteria.ServicePayability), &doc)
	return doc.MemoOp.BoundaryStatement
})

const (
	ansiReset  = "\x1b[0m"
	ansiFgOff  = "\x1b[39m" // default foreground: ends a colour, keeps bold
	ansiBold   = "\x1b[1m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
)

// tone picks the colour of a state or grade word.
func tone(word string) string {
	switch word {
	case string(verdict.Populated), string(verdict.Bound), string(verdict.PresentFailClosed), verdict.Probed:
		return ansiGreen
	case string(verdict.NotA402), string(verdict.ResourceMismatch), string(verdict.PresentFailDirty),
		string(verdict.MemoReused), string(verdict.LegMismatch), verdict.NotProbed:
		return ansiRed
	case string(verdict.AmountsOnly), string(verdict.Unconfigured), string(verdict.HeaderMissing),
		string(verdict.MemoAbsent), string(verdict.Absent), string(verdict.Ungraded):
		return ansiYellow
	}
	return ""
}

type painter bool

func (p painter) word(s string) string {
	if !p {
		return s
	}
	if c := tone(s); c != "" {
		return c + s + ansiFgOff
	}
	return s
}

// line colours every state or grade word of a verdict line.
func (p painter) line(s string) string {
	if !p {
		return s
	}
	fields := strings.Split(s, " ")
	for i, f := range fields {
		fields[i] = p.word(f)
	}
	return ansiBold + strings.Join(fields, " ") + ansiReset
}

// renderText prints a report for people: the verdict line first, then every
// factor as an aligned table.
func renderText(w io.Writer, rep ops.Report, colour bool) error {
	p := painter(colour)
	var b bytes.Buffer
	env := rep.Common()
	fmt.Fprintln(&b, p.line(env.VerdictLine))
	for _, l := range whyLines(rep) {
		fmt.Fprintln(&b, l)
	}
	fmt.Fprintln(&b)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "url\t%s\n", env.URL)
	fmt.Fprintf(tw, "checked at\t%s\n", env.CheckedAt)
	fmt.Fprintf(tw, "criteria\t%s rev %s (%s %s)\n", env.CriteriaID, env.CriteriaRevision, env.Service, env.Version)
	fmt.Fprintf(tw, "corpus\t%s %s\n", env.Corpus.ID, env.Corpus.SHA256)
	tw.Flush()
	fmt.Fprintln(&b)

	switch r := rep.(type) {
	case ops.CheckReport:
		renderFactors(&b, p, r)
	case ops.MemoReport:
		if r.Reason != nil {
			fmt.Fprintf(&b, "reason  %s\n\n", *r.Reason)
		}
		renderFactors(&b, p, r)
	case ops.ProbeReport:
		renderProbe(&b, p, r)
	}
	fmt.Fprintln(&b)
	if _, ok := rep.(ops.MemoReport); ok {
		// The memo op's own honesty statement: what BOUND does and does not
		// say. The envelope's honesty line is the check op's (POPULATED).
		fmt.Fprintln(&b, memoBoundary())
	} else {
		fmt.Fprintln(&b, env.HonestyLine)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// renderFactors prints a report's factors (fetch_error included) as rows.
func renderFactors(b *bytes.Buffer, p painter, rep ops.Report) {
	raw, _ := json.Marshal(rep)
	var doc struct {
		Factors json.RawMessage `json:"factors"`
	}
	_ = json.Unmarshal(raw, &doc)
	rows := flatten(doc.Factors)
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "factor\tvalue")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	tw.Flush()
}

func renderProbe(b *bytes.Buffer, p painter, r ops.ProbeReport) {
	fmt.Fprintf(b, "outcome  %s\n\n", p.word(r.ProbeResult.Outcome))
	grades := map[string]verdict.RailGrade{
		"direct": r.Grades.Direct, "facilitator": r.Grades.Facilitator,
		"missing_memo": r.Grades.MissingMemo, "bogus": r.Grades.Bogus,
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "probe\tmethod\tstatus\toutcome\tgrade\treason")
	for i, pr := range r.Probes {
		grade, reason := "", ""
		if g, ok := grades[pr.ID]; ok {
			grade, reason = p.word(string(g.Grade)), g.Reason
		}
		outcome := string(pr.Outcome)
		if i < len(r.FetchErrors) && r.FetchErrors[i] != nil {
			outcome += " (" + string(*r.FetchErrors[i]) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", pr.ID, pr.Method, intOrDash(pr.Status), outcome, grade, reason)
	}
	tw.Flush()
	fmt.Fprintln(b)
	tw = tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "method\tstatus\tgated\tunpaid_2xx")
	for _, m := range []struct {
		name string
		e    verdict.MethodEntry
	}{{"GET", r.Methods.GET}, {"HEAD", r.Methods.HEAD}, {"POST", r.Methods.POST}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.name, intOrDash(m.e.Status), boolOrDash(m.e.Gated), boolOrDash(m.e.Unpaid2xx))
	}
	tw.Flush()
	fmt.Fprintln(b)
	if len(r.Exposures) == 0 {
		fmt.Fprintln(b, "exposures  none observed")
	} else {
		fmt.Fprintf(b, "exposures  %s\n", p.colourAll(strings.Join(r.Exposures, ", ")))
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b, r.NoFundsProperty)
}

func (p painter) colourAll(s string) string {
	if !p {
		return s
	}
	return ansiRed + s + ansiReset
}

// listItem prints one census name. Names come from a fetched challenge, so a
// name that is empty, carries a character that is not printable (a terminal
// escape, a line break, a bidi control) or could be mistaken for the list's
// own punctuation is printed quoted with Go escapes; every other name as is.
func listItem(s string) string {
	plain := s != "" && strings.TrimSpace(s) == s && !strings.ContainsAny(s, ",\"") &&
		strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
	if plain {
		return s
	}
	return strconv.Quote(s)
}

func intOrDash(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func boolOrDash(v *bool) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// flatten turns a JSON object into (dotted key, value) rows in document
// order; arrays of strings become one comma-separated value and null is "-".
func flatten(raw []byte) [][2]string {
	var rows [][2]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func(prefix string)
	walk = func(prefix string) {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					k, _ := dec.Token()
					key := k.(string)
					if prefix != "" {
						key = prefix + "." + key
					}
					walk(key)
				}
				dec.Token() // '}'
			case '[':
				var items []string
				for dec.More() {
					var v any
					_ = dec.Decode(&v)
					items = append(items, listItem(fmt.Sprint(v)))
				}
				dec.Token() // ']'
				val := strings.Join(items, ", ")
				if len(items) == 0 {
					val = "(none)"
				}
				rows = append(rows, [2]string{prefix, val})
			}
		case nil:
			rows = append(rows, [2]string{prefix, "-"})
		default:
			rows = append(rows, [2]string{prefix, fmt.Sprint(t)})
		}
	}
	walk("")
	return rows
}
