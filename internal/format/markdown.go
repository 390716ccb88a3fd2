package format

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// MarkdownMaxFindings bounds the finding rows of a Markdown summary (a job
// summary is at most 1 MiB); the rest are counted in a last line.
const MarkdownMaxFindings = 1000

// Markdown writes a summary fit for $GITHUB_STEP_SUMMARY or a pull-request
// comment: a heading with the overall, a table with one row per endpoint,
// and a table with one row per finding (at most MarkdownMaxFindings, then
// how many more). Table cells are escaped: pipes, backslashes, HTML's < > &,
// and line breaks.
func Markdown(w io.Writer, run Run) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "### payability %s: %s\n\n", mdCell(run.Op), run.Overall())
	fmt.Fprintln(bw, "| endpoint | overall | outcome | errors | warnings | notes |")
	fmt.Fprintln(bw, "| --- | --- | --- | ---: | ---: | ---: |")
	for _, r := range run.Results {
		e, wn, n := r.Counts()
		fmt.Fprintf(bw, "| %s | %s %s | %s | %d | %d | %d |\n", mdCell(r.URL), mark(r.Overall()), r.Overall(), mdCell(r.Outcome), e, wn, n)
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
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", mdCell(r.URL), f.Level, mdCell(f.Rule), mdCell(f.Field), mdCell(f.Message))
		}
	}
	if more > 0 {
		fmt.Fprintf(bw, "\n… and %d more findings (the SARIF, JUnit and JSON outputs have them all).\n", more)
	}
	if !any {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "No findings.")
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

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"\r\n", " ", "\r", " ", "\n", " ",
)

// mdCell escapes a string for one table cell.
func mdCell(s string) string { return mdEscaper.Replace(s) }
