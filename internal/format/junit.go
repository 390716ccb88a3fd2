package format

import (
	"encoding/xml"
	"io"
	"strings"
)

// JUnit XML: one testsuite per endpoint (named by its URL), one testcase per
// rule or factor (classname the op), a failure for each case with an error
// (and, with --fail-on warn, a warning); findings that are not failures are
// the case's system-out.

// JUnitSuites is the document; exported so tests (and callers) can parse a
// report back with encoding/xml.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one endpoint.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one rule or factor.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *JUnitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitFailure is a case that did not hold.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes run as JUnit XML under the threshold. Every string is
// safeText'd (one line each: the characters XML 1.0 forbids, and the other
// unsafe ones, are U+FFFD) before encoding/xml escapes it.
func JUnit(w io.Writer, run Run, failOn FailOn) error {
	x := func(s string) string { return safeText(s, "") }
	doc := JUnitSuites{Name: x("payability " + run.Op)}
	for _, r := range run.Results {
		s := JUnitSuite{Name: x(r.URL)}
		for _, c := range r.Cases {
			jc := JUnitCase{Name: x(c.Name), Classname: x("payability." + r.Op)}
			var fails, rest []string
			var first *Finding
			for i, f := range c.Findings {
				line := x(string(f.Level) + " " + f.Rule + " " + f.Field + ": " + f.Message + suppressedNote(f.Suppressed))
				if failOn.failing(f.Level) && f.Suppressed == nil {
					fails = append(fails, line)
					if first == nil {
						first = &c.Findings[i]
					}
				} else {
					rest = append(rest, line)
				}
			}
			if first != nil {
				jc.Failure = &JUnitFailure{Message: x(first.Rule + ": " + first.Message), Type: string(first.Level), Text: strings.Join(fails, "\n")}
				s.Failures++
			}
			if len(rest) > 0 {
				jc.SystemOut = strings.Join(rest, "\n")
			}
			s.Cases = append(s.Cases, jc)
			s.Tests++
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
