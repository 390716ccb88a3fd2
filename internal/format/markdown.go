package format

import (
	"bufio"
	"fmt"
	"io"
)

// MarkdownMaxFindings bounds the finding rows of a Markdown summary (a job
// summary is at most 1 MiB); the rest are counted in a last line.
const MarkdownMaxFindings = 1000

// Markdown writes a summary fit for $GITHUB_STEP_SUMMARY or a pull-request
// comment: a heading with the overall, a table with one row per endpoint,
// and a table with one row per finding (at most MarkdownMaxFindings, then
// how many more). Every string the renderer did not write (URL, outcome,
// rule, field, message) is a code span (mdCode), so none of it is read as
// Markdown or HTML.
func Markdown(w io.Writer, run Run) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "### payability%s: %s\n\n", mdHeading(run.Op), run.Overall())
	fmt.Fprintln(bw, "| endpoint | overall | outcome | errors | warnings | notes |")
	fmt.Fprintln(bw, "| --- | --- | --- | ---: | ---: | ---: |")
	for _, r := range run.Results {
		e, wn, n := r.Counts()
		fmt.Fprintf(bw, "| %s | %s %s | %s | %d | %d | %d |\n", mdCode(r.URL), mark(r.Overall()), r.Overall(), mdCode(r.Outcome), e, wn, n)
	}
	any := false
	rows, more := 0, 0
	for _, r := range run.Results {
		for _, f := range r.Findings() {
			if rows == MarkdownMaxFindings {
				more++
				continue
			}
			rows++
			if !any {
				fmt.Fprintln(bw)
				fmt.Fprintln(bw, "| endpoint | level | rule | field | message |")
				fmt.Fprintln(bw, "| --- | --- | --- | --- | --- |")
				any = true
			}
			level := string(f.Level)
			if f.Suppressed != nil {
				level += " (suppressed)"
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", mdCode(r.URL), level, mdCode(f.Rule), mdCode(f.Field), mdCode(f.Message+suppressedNote(f.Suppressed)))
		}
	}
	if more > 0 {
		fmt.Fprintf(bw, "\n… and %d more findings (the SARIF, JUnit and JSON outputs have them all).\n", more)
	}
	if !any {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "No findings.")
	}
	if n := run.Suppressed(); n > 0 {
		fmt.Fprintf(bw, "\n%d findings are suppressed by the repository's configuration (an ignore entry or the baseline): listed, never counted.\n", n)
	}
	return bw.Flush()
}

func mark(o Overall) string {
	switch o {
	case Fail:
		return "❌"
	case Warn:
		return "⚠️"
	}
	return "✅"
}

// mdHeading is the op in the heading: a published op as it is, anything
// else as a code span.
func mdHeading(op string) string {
	switch {
	case op == "":
		return ""
	case knownOp(op):
		return " " + op
	}
	return " " + mdCode(op)
}
