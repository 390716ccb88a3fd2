package format

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// WriteOverall writes the run's overall as one word and a newline (for scripts).
func WriteOverall(w io.Writer, run Run) error {
	_, err := io.WriteString(w, string(run.Overall())+"\n")
	return err
}

// Lines writes one line per result: its overall, its URL and its outcome,
// tab-separated (scan's text format).
func Lines(w io.Writer, results []Result) error {
	bw := bufio.NewWriter(w)
	for _, r := range results {
		bw.WriteString(string(r.Overall()) + "\t" + plain(r.URL) + "\t" + r.Outcome + "\n")
	}
	return bw.Flush()
}

// plain returns s, or s quoted with Go escapes when it carries a character
// that is not printable (a scan entry's URL is the caller's input and may).
func plain(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}
