package format

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// The finding of issue 21: a URL of a scan's input that carries Markdown,
// HTML and terminal bytes.
const hostileURL = "https://x/](http://evil)![a](http://evil/i.png)<img src=x>\x1b[31m\x00"

// hostileSeeds are strings each renderer's reader would interpret.
var hostileSeeds = []string{
	hostileURL,
	"[x](http://evil) <b>bold</b> *em* _em_ **strong** ~~del~~ `code` ``two``",
	"https://evil.example/autolink www.evil.example mail@evil.example <http://evil>",
	"# heading\n## another\r\n- [ ] task\n> quote\n| a | b |\n| --- | --- |",
	"a|b\\|c\\\\|d | e",
	"&lt;img src=x&gt; &#60;script&#62; &amp;",
	"::error::injected\n::warning title=x::y\r\n%0A%25%3A%2C",
	"\u202eevil\u2066\u2069\u200f\ufeff\u2028\u2029\u0085\x7f\x9b",
	"<![CDATA[x]]> </testsuite> \"' \x00\x01\x0b\x0c\ufffe\uffff",
	"\xff\xfe invalid utf-8 \xc3",
	"`", "``", " ", "", "\\", "[", "]", "\\[x\\]",
}

// hostileRun puts the four strings wherever a renderer writes one it did
// not write: the URL, the outcome, the case, the rule, the field and the
// message.
func hostileRun(u, rule, field, msg string) Run {
	f := Finding{Rule: rule, Level: LevelError, Field: field, Message: msg}
	return Run{Op: "check", ToolVersion: "test", Rules: CriteriaRules("check"), Results: []Result{{
		Op: "check", URL: u, Outcome: msg, Cases: []Case{{Name: field, Findings: []Finding{f}}},
	}}}
}

func addSeeds(f *testing.F) {
	for i, s := range hostileSeeds {
		f.Add(s, hostileSeeds[(i+1)%len(hostileSeeds)], hostileSeeds[(i+2)%len(hostileSeeds)], hostileSeeds[(i+3)%len(hostileSeeds)])
	}
}

// cellText is what a reader sees in a Markdown cell: newlines are spaces
// and unsafe characters U+FFFD.
func cellText(s string) string {
	return safeText(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s), "")
}

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// nodeText concatenates the text under n.
func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// checkMarkdown parses md as GitHub Flavored Markdown and fails on any
// construct the renderer did not write: a link, an autolink, an image,
// HTML, emphasis, strike-through, a task box or a second heading; every
// table row has its header's cells, and the cells of want's rows read
// exactly as the inputs.
func checkMarkdown(t *testing.T, md []byte, want [][]string) {
	t.Helper()
	doc := gfm.Parser().Parse(text.NewReader(md))
	headings := 0
	var tables []*east.Table
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindLink, ast.KindAutoLink, ast.KindImage, ast.KindRawHTML, ast.KindHTMLBlock,
			ast.KindEmphasis, east.KindStrikethrough, east.KindTaskCheckBox, ast.KindBlockquote, ast.KindList:
			t.Errorf("the Markdown holds a %s built from input:\n%s", n.Kind(), md)
		case ast.KindHeading:
			headings++
		case east.KindTable:
			tables = append(tables, n.(*east.Table))
		}
		return ast.WalkContinue, nil
	})
	if headings != 1 {
		t.Errorf("%d headings:\n%s", headings, md)
	}
	if len(tables) != len(want) {
		t.Fatalf("%d tables, want %d:\n%s", len(tables), len(want), md)
	}
	for i, tb := range tables {
		header := tb.FirstChild()
		cols := header.ChildCount()
		row := header.NextSibling()
		if row == nil || row.NextSibling() != nil {
			t.Fatalf("table %d: want exactly one row:\n%s", i, md)
		}
		if row.ChildCount() != cols || len(want[i]) != cols {
			t.Fatalf("table %d: a row of %d cells under %d columns:\n%s", i, row.ChildCount(), cols, md)
		}
		j := 0
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			if w := want[i][j]; w != "*" {
				if got := nodeText(c, md); got != w {
					t.Errorf("table %d cell %d reads %q, want %q", i, j, got, w)
				}
			}
			j++
		}
	}
}

// TestMarkdownReproducesNoInjection is issue 21's reproduction: the
// hostile URL of a scan's input comes out as one inert code span.
func TestMarkdownReproducesNoInjection(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, Run{Op: "check", Results: []Result{Refused("check", hostileURL, "url_scheme")}}); err != nil {
		t.Fatal(err)
	}
	u := cellText(hostileURL)
	checkMarkdown(t, b.Bytes(), [][]string{
		{u, "❌ fail", "refused: url_scheme", "1", "0", "0"},
		{u, "error", "refused/url_scheme", "url", "refused by rule url_scheme; no request was sent"},
	})
	if bytes.ContainsAny(b.Bytes(), "\x00\x1b") {
		t.Errorf("a control byte reached the summary:\n%q", b.String())
	}
}

func FuzzMarkdownInert(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, u, rule, field, msg string) {
		var b bytes.Buffer
		if err := Markdown(&b, hostileRun(u, rule, field, msg)); err != nil {
			t.Fatal(err)
		}
		for _, r := range b.String() {
			if r != '\n' && unsafeRune(r) {
				t.Fatalf("unsafe rune %U in the Markdown", r)
			}
		}
		checkMarkdown(t, b.Bytes(), [][]string{
			{cellText(u), "*", cellText(msg), "1", "0", "0"},
			{cellText(u), "error", cellText(rule), cellText(field), cellText(msg)},
		})
	})
}

// unescapeWorkflow reads a workflow command's data or property back as the
// runner does.
func unescapeWorkflow(s string, property bool) string {
	pairs := []string{"%0D", "\r", "%0A", "\n"}
	if property {
		pairs = append(pairs, "%3A", ":", "%2C", ",")
	}
	return strings.ReplaceAll(strings.NewReplacer(pairs...).Replace(s), "%25", "%")
}

func FuzzGitHubInert(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, u, rule, field, msg string) {
		var b bytes.Buffer
		if err := GitHub(&b, hostileRun(u, rule, field, msg).Results); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
			t.Fatalf("want one command line: %q", out)
		}
		line := strings.TrimSuffix(out, "\n")
		for _, r := range line {
			if unsafeRune(r) {
				t.Fatalf("rune %U in the command line %q", r, line)
			}
		}
		props, data, ok := strings.Cut(strings.TrimPrefix(line, "::error "), "::")
		if !ok || !strings.HasPrefix(line, "::error title=") {
			t.Fatalf("not one error command: %q", line)
		}
		if strings.ContainsAny(strings.TrimPrefix(props, "title="), ":,") {
			t.Fatalf("an unescaped : or , in the properties %q", props)
		}
		if got, want := unescapeWorkflow(strings.TrimPrefix(props, "title="), true), safeText(rule, "\r\n"); got != want {
			t.Errorf("title reads %q, want %q", got, want)
		}
		if got, want := unescapeWorkflow(data, false), safeText(u+" "+field+": "+msg, "\r\n"); got != want {
			t.Errorf("message reads %q, want %q", got, want)
		}
	})
}

// xmlChar is XML 1.0's Char production.
func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xa || r == 0xd || r >= 0x20 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
}

func FuzzJUnitInert(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, u, rule, field, msg string) {
		var b bytes.Buffer
		if err := JUnit(&b, hostileRun(u, rule, field, msg), FailOnError); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b.Bytes()) {
			t.Fatal("the document is not UTF-8")
		}
		for _, r := range b.String() {
			if !xmlChar(r) {
				t.Fatalf("%U is not an XML 1.0 character", r)
			}
		}
		var doc JUnitSuites
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("does not parse: %v\n%s", err, b.String())
		}
		if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Failure == nil {
			t.Fatalf("shape: %+v", doc)
		}
		c := doc.Suites[0].Cases[0]
		if doc.Suites[0].Name != safeText(u, "") || c.Name != safeText(field, "") {
			t.Errorf("suite %q case %q", doc.Suites[0].Name, c.Name)
		}
		if want := safeText(rule+": "+msg, ""); c.Failure.Message != want {
			t.Errorf("failure message %q, want %q", c.Failure.Message, want)
		}
	})
}

// unescapeSARIF reads a SARIF plain-text message back, failing on a
// bracket that is not escaped (it would start an embedded link).
func unescapeSARIF(t *testing.T, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) && strings.IndexByte(`\[]`, s[i+1]) >= 0 {
				b.WriteByte(s[i+1])
				i++
				continue
			}
			t.Fatalf("a lone backslash in %q", s)
		case '[', ']':
			t.Fatalf("an unescaped bracket in %q", s)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func FuzzSARIFInert(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, u, rule, field, msg string) {
		run := hostileRun(u, rule, field, msg)
		run.Artifact = NewArtifact("urls.txt", "", []byte(u+"\n"))
		var b bytes.Buffer
		if err := SARIF(&b, run); err != nil {
			t.Fatal(err)
		}
		if problems := githubUploadProblems(b.Bytes()); len(problems) > 0 {
			t.Fatalf("GitHub would refuse it: %v\n%s", problems, b.String())
		}
		var doc struct {
			Runs []struct {
				Results []struct {
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
					Properties struct {
						Endpoint string `json:"endpoint"`
					} `json:"properties"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		res := doc.Runs[0].Results[0]
		got := unescapeSARIF(t, res.Message.Text)
		if want := safeText(resultMessageText(u, rule, field, msg), ""); got != want {
			t.Errorf("message reads %q, want %q", got, want)
		}
		if utf8.ValidString(u) && res.Properties.Endpoint != u {
			t.Errorf("properties.endpoint %q, want %q", res.Properties.Endpoint, u)
		}
	})
}

// resultMessageText is the unescaped text resultMessage builds.
func resultMessageText(u, rule, field, msg string) string {
	if msg == "" {
		msg = "rule " + rule + " did not hold"
	}
	if field != "" {
		msg = field + ": " + msg
	}
	if u == "" {
		u = "(no URL)"
	}
	return u + " " + msg
}

// githubUploadProblems checks a SARIF log against GitHub code scanning's
// documented upload rules (docs/ci.md lists them with their source) and
// returns every one it breaks.
func githubUploadProblems(raw []byte) []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	var log struct {
		Schema  *string `json:"$schema"`
		Version string  `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name           string `json:"name"`
					Version        string `json:"version"`
					InformationURI string `json:"informationUri"`
					Rules          []struct {
						ID               string  `json:"id"`
						Name             *string `json:"name"`
						ShortDescription struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
						FullDescription struct {
							Text string `json:"text"`
						} `json:"fullDescription"`
						Help struct {
							Text string `json:"text"`
						} `json:"help"`
						HelpURI              string `json:"helpUri"`
						DefaultConfiguration *struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			AutomationDetails *struct {
				ID string `json:"id"`
			} `json:"automationDetails"`
			Results *[]struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine, StartColumn, EndLine, EndColumn int
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	if log.Schema == nil || *log.Schema == "" {
		bad("no $schema")
	}
	if log.Version != "2.1.0" {
		bad("version %q", log.Version)
	}
	if len(log.Runs) < 1 || len(log.Runs) > 20 {
		bad("%d runs (1 to 20)", len(log.Runs))
	}
	levels := map[string]bool{"note": true, "warning": true, "error": true}
	for ri, run := range log.Runs {
		d := run.Tool.Driver
		if d.Name == "" {
			bad("run %d: tool.driver.name empty", ri)
		}
		if d.InformationURI != RepositoryURL || d.Version == "" {
			bad("run %d: informationUri %q version %q", ri, d.InformationURI, d.Version)
		}
		if d.Rules == nil || len(d.Rules) > 25000 {
			bad("run %d: rules absent or over 25,000", ri)
		}
		ids := map[string]bool{}
		for i, r := range d.Rules {
			switch {
			case r.ID == "" || ids[r.ID]:
				bad("rule %d: id %q empty or repeated", i, r.ID)
			case r.Name != nil && (*r.Name == "" || utf8.RuneCountInString(*r.Name) > 255):
				bad("rule %s: name", r.ID)
			case r.ShortDescription.Text == "" || utf8.RuneCountInString(r.ShortDescription.Text) > 1024:
				bad("rule %s: shortDescription.text empty or over 1,024 characters", r.ID)
			case r.FullDescription.Text == "" || utf8.RuneCountInString(r.FullDescription.Text) > 1024:
				bad("rule %s: fullDescription.text empty or over 1,024 characters", r.ID)
			case r.Help.Text == "":
				bad("rule %s: help.text empty", r.ID)
			case r.DefaultConfiguration != nil && !levels[r.DefaultConfiguration.Level]:
				bad("rule %s: defaultConfiguration.level %q", r.ID, r.DefaultConfiguration.Level)
			case !strings.HasPrefix(r.HelpURI, RepositoryURL+"/blob/main/docs/") || !strings.Contains(r.HelpURI, ".md#"):
				bad("rule %s: helpUri %q", r.ID, r.HelpURI)
			}
			ids[r.ID] = true
		}
		if run.AutomationDetails == nil || !strings.HasSuffix(run.AutomationDetails.ID, "/") || run.AutomationDetails.ID == "/" {
			bad("run %d: automationDetails.id is not a category/", ri)
		}
		if run.Results == nil {
			bad("run %d: no results array", ri)
			continue
		}
		if len(*run.Results) > 25000 {
			bad("run %d: %d results (at most 25,000)", ri, len(*run.Results))
		}
		for i, res := range *run.Results {
			if res.RuleID == "" || res.RuleIndex == nil || *res.RuleIndex < 0 || *res.RuleIndex >= len(d.Rules) || d.Rules[*res.RuleIndex].ID != res.RuleID {
				bad("result %d: ruleId %q / ruleIndex do not name a rule", i, res.RuleID)
			}
			if !levels[res.Level] {
				bad("result %d: level %q", i, res.Level)
			}
			if strings.TrimSpace(res.Message.Text) == "" {
				bad("result %d: message.text empty", i)
			}
			if len(res.Locations) < 1 || len(res.Locations) > 10 {
				bad("result %d: %d locations (1 to 10)", i, len(res.Locations))
				continue
			}
			pl := res.Locations[0].PhysicalLocation
			if pl == nil || pl.Region == nil {
				bad("result %d: no physicalLocation with a region", i)
				continue
			}
			if msg := artifactURIProblem(pl.ArtifactLocation.URI); msg != "" {
				bad("result %d: artifactLocation.uri %q: %s", i, pl.ArtifactLocation.URI, msg)
			}
			rg := pl.Region
			if rg.StartLine < 1 || rg.StartColumn < 1 || rg.EndLine < rg.StartLine || rg.EndColumn < 1 || rg.EndLine == rg.StartLine && rg.EndColumn < rg.StartColumn {
				bad("result %d: region %+v", i, *rg)
			}
			if res.PartialFingerprints["primaryLocationLineHash"] == "" {
				bad("result %d: no partialFingerprints.primaryLocationLineHash", i)
			}
		}
	}
	return p
}

// artifactURIProblem says why a uri is not one code scanning can place in
// the repository: it must be a relative reference from the repository
// root (no scheme, no leading /, no .. segment) or a file: URI.
func artifactURIProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return "empty"
	case err != nil:
		return "not a URI reference"
	case u.Scheme == "file":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return "a file: URI with a host or no absolute path"
		}
		return ""
	case u.Scheme != "" || u.Host != "":
		return "an absolute URI of scheme " + u.Scheme
	case strings.HasPrefix(u.Path, "/"):
		return "a rooted path"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." {
			return "a .. segment"
		}
	}
	return ""
}
