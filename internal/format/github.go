package format

import (
	"bufio"
	"io"
	"strings"
)

// GitHub writes one workflow command per finding of every result:
// ::error, ::warning or ::notice, the rule id as the title, and the
// endpoint, the field and the message as the message. Data and properties
// are escaped as the runner reads them (%, CR and LF in both, and : and , in
// properties), and every other unsafe character (NUL, ESC, the other
// controls, bidi formatting) is U+FFFD, so no value can end a command, start
// another, or reach the log as a terminal sequence.
func GitHub(w io.Writer, results []Result) error {
	bw := bufio.NewWriter(w)
	for _, r := range results {
		for _, f := range r.Findings() {
			cmd := "notice"
			switch {
			case f.Suppressed != nil:
				// A suppressed finding is a notice: still in the log,
				// never an error or warning annotation.
			case f.Level == LevelError:
				cmd = "error"
			case f.Level == LevelWarning:
				cmd = "warning"
			}
			msg := r.URL + " " + f.Field + ": " + f.Message + suppressedNote(f.Suppressed)
			bw.WriteString("::" + cmd + " title=" + escapeProperty(f.Rule) + "::" + escapeData(msg) + "\n")
		}
	}
	return bw.Flush()
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(safeText(s, "\r\n")) }
func escapeProperty(s string) string { return propertyEscaper.Replace(safeText(s, "\r\n")) }
