package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
)

// TestSARIFMeetsGitHubUploadRules: every shape the renderer meets, with and
// without an artifact file, passes GitHub's documented upload rules
// (githubUploadProblems), and the checker refuses what GitHub refuses.
func TestSARIFMeetsGitHubUploadRules(t *testing.T) {
	runs := append(sarifRuns(), hostileRun(hostileURL, "", "", ""))
	for _, r := range goldenRuns(t) {
		runs = append(runs, r)
	}
	for i, run := range runs {
		for _, art := range []Artifact{{}, NewArtifact("sellers/urls.txt", "", []byte(testURL+"\n"))} {
			run.Artifact = art
			if run.ToolVersion == "" {
				run.ToolVersion = "test"
			}
			var b bytes.Buffer
			if err := SARIF(&b, run); err != nil {
				t.Fatal(err)
			}
			if p := githubUploadProblems(b.Bytes()); len(p) > 0 {
				t.Errorf("run %d (%s, artifact %s): %v", i, run.Op, art.URI(), p)
			}
		}
	}
	var b bytes.Buffer
	_ = SARIF(&b, sampleRun())
	good := b.String()
	for name, bad := range map[string]string{
		"an https artifact": strings.Replace(good, `"uri": ".payability/endpoints"`, `"uri": "https://seller.example/api/paid"`, 1),
		"a rooted path":     strings.Replace(good, `"uri": ".payability/endpoints"`, `"uri": "/etc/urls"`, 1),
		"a parent segment":  strings.Replace(good, `"uri": ".payability/endpoints"`, `"uri": "../urls"`, 1),
		"no fingerprint":    strings.Replace(good, `"primaryLocationLineHash"`, `"otherHash"`, 1),
		"level none":        strings.Replace(good, `"level": "error"`, `"level": "none"`, 1),
		"empty message":     regexp.MustCompile(`"message": \{\s*"text": "[^"]*"`).ReplaceAllString(good, `"message": {"text": ""`),
		"no region":         regexp.MustCompile(`,\s*"region": \{[^}]*\}`).ReplaceAllString(good, ""),
		"no help":           regexp.MustCompile(`"help": \{\s*"text": "[^"]*"`).ReplaceAllString(good, `"help": {"text": ""`),
		"no run":            `{"$schema":"x","version":"2.1.0","runs":[]}`,
	} {
		if bad == good {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if p := githubUploadProblems([]byte(bad)); len(p) == 0 {
			t.Errorf("%s: the checker accepted it", name)
		}
	}
}

// TestSARIFLocatesTheArtifactLine: a result sits in the artifact file at the
// first line naming its URL as a whole token, columns in UTF-16 units; a URL
// the file does not name, or a file not read, is at line 1.
func TestSARIFLocatesTheArtifactLine(t *testing.T) {
	content := []byte("# list\n  - https://a.example/x/longer\n\"https://a.example/x\" # ü\r\nü https://b.example/é\n  - 'https://c.example/a b<c>'\n")
	a := NewArtifact("urls.txt", "", content)
	for u, want := range map[string]region{
		"https://a.example/x":      {3, 2, 3, 21},
		"https://b.example/é":      {4, 3, 4, 22},
		"https://c.example/":       {1, 1, 1, 1},
		"https://c.example/a b<c>": {5, 6, 5, 30},
		"https://a.example/x/":     {1, 1, 1, 1},
		"":                         {1, 1, 1, 1},
	} {
		if got := a.find(u); got != want {
			t.Errorf("%s at %+v, want %+v", u, got, want)
		}
	}
	if got := NewArtifact("urls.txt", "", nil).find("https://a.example/x"); got != (region{1, 1, 1, 1}) {
		t.Errorf("an unread file: %+v", got)
	}
	big := bytes.Repeat([]byte("x"), MaxArtifactRead+1)
	if got := NewArtifact("urls.txt", "", append(big, "\nhttps://a.example/x\n"...)).find("https://a.example/x"); got.StartLine != 1 {
		t.Errorf("a file over the cap was searched: %+v", got)
	}
}

// TestArtifactURIs: the artifact is always a relative reference from the
// repository root or a file: URI, never another scheme.
func TestArtifactURIs(t *testing.T) {
	wd := filepath.FromSlash("/work/repo")
	for _, tt := range []struct{ path, want string }{
		{"", PlaceholderArtifact},
		{"-", PlaceholderArtifact},
		{"urls.txt", "urls.txt"},
		{"./ci//urls.txt", "ci/urls.txt"},
		{"my urls%.txt", "my%20urls%25.txt"},
		{"a:b.txt", "./a:b.txt"},
		{"https://evil/x", "./https:/evil/x"}, // a relative path that looks like a URL stays a path
		{filepath.FromSlash("/work/repo/ci/urls.txt"), "ci/urls.txt"},
		{filepath.FromSlash("/tmp/urls.txt"), "file:///tmp/urls.txt"},
		{filepath.FromSlash("../other/urls.txt"), "file:///work/other/urls.txt"},
	} {
		got := NewArtifact(tt.path, wd, nil).URI()
		if got != tt.want {
			t.Errorf("%q: %q, want %q", tt.path, got, tt.want)
		}
		if p := artifactURIProblem(got); p != "" {
			t.Errorf("%q: %q is %s", tt.path, got, p)
		}
	}
	if got := (Artifact{}).URI(); got != PlaceholderArtifact {
		t.Errorf("zero artifact: %q", got)
	}
}

// TestSARIFFingerprintsAreStable: the fingerprint is the rule, endpoint,
// leg, entry and field: the same finding on another line, another run or
// another message keeps it; any coordinate changes it; a repeated finding
// is counted.
func TestSARIFFingerprintsAreStable(t *testing.T) {
	e0, e1 := 0, 1
	base := Finding{Rule: "amount_zero", Level: LevelError, Field: "header:accepts[0].amount", Leg: "header", Entry: &e0, Message: "m"}
	fp := fingerprint(base.Rule, testURL, base)
	moved := base
	moved.Message = "another message"
	if fingerprint(moved.Rule, testURL, moved) != fp {
		t.Error("the message changed the fingerprint")
	}
	for name, f := range map[string]func(*Finding){
		"entry": func(f *Finding) { f.Entry = &e1 },
		"none":  func(f *Finding) { f.Entry = nil },
		"leg":   func(f *Finding) { f.Leg = "body" },
		"field": func(f *Finding) { f.Field = "header:accepts[0].asset" },
		"rule":  func(f *Finding) { f.Rule = "amount_missing" },
	} {
		g := base
		f(&g)
		if fingerprint(g.Rule, testURL, g) == fp {
			t.Errorf("%s did not change the fingerprint", name)
		}
	}
	if fingerprint(base.Rule, testURL+"/other", base) == fp {
		t.Error("the endpoint did not change the fingerprint")
	}
	res := Result{Op: "lint", URL: testURL, Cases: []Case{{Name: "amount_zero", Findings: []Finding{base, base}}}}
	hashes := func(a Artifact) []string {
		var b bytes.Buffer
		_ = SARIF(&b, Run{Op: "lint", ToolVersion: "test", Results: []Result{res}, Artifact: a})
		var doc struct {
			Runs []struct {
				Results []struct {
					PartialFingerprints map[string]string `json:"partialFingerprints"`
				} `json:"results"`
			} `json:"runs"`
		}
		_ = json.Unmarshal(b.Bytes(), &doc)
		var out []string
		for _, r := range doc.Runs[0].Results {
			out = append(out, r.PartialFingerprints["primaryLocationLineHash"], r.PartialFingerprints[FingerprintKey])
		}
		return out
	}
	h1 := hashes(NewArtifact("urls.txt", "", []byte(testURL+"\n")))
	h2 := hashes(NewArtifact("urls.txt", "", []byte("\n\n"+testURL+"\n")))
	want := []string{fp[:16] + ":1", fp, fp[:16] + ":2", fp}
	if strings.Join(h1, " ") != strings.Join(want, " ") || strings.Join(h2, " ") != strings.Join(want, " ") {
		t.Errorf("fingerprints %v and %v, want %v on any line", h1, h2, want)
	}
}

// TestSARIFKeepsToGitHubLimits: past the result limit a run keeps the most
// severe results and counts the rest; past the rule limit a result whose
// rule would be one too many is counted too.
func TestSARIFKeepsToGitHubLimits(t *testing.T) {
	defer func(r, u int) { maxResults, maxRules = r, u }(maxResults, maxRules)
	maxResults, maxRules = 5, 3
	var results []Result
	for i := 0; i < 4; i++ {
		results = append(results, Result{Op: "check", URL: testURL, Cases: []Case{{Name: "c", Findings: []Finding{{Rule: "n", Level: LevelNote, Field: "f"}}}}})
	}
	for i := 0; i < 3; i++ {
		results = append(results, Refused("check", testURL, []string{"a", "b", "c"}[i]))
	}
	var b bytes.Buffer
	_ = SARIF(&b, Run{Op: "check", ToolVersion: "test", Results: results})
	var doc struct {
		Runs []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
			Tool struct {
				Driver struct {
					Rules []json.RawMessage `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Properties struct {
				OmittedResults int `json:"omittedResults"`
			} `json:"properties"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	var got []string
	for _, res := range r.Results {
		got = append(got, res.RuleID)
	}
	if strings.Join(got, ",") != "refused/a,refused/b,refused/c" || r.Properties.OmittedResults != 4 || len(r.Tool.Driver.Rules) != 3 {
		t.Errorf("kept %v, omitted %d, %d rules", got, r.Properties.OmittedResults, len(r.Tool.Driver.Rules))
	}
}

// headingAnchor is GitHub's anchor of a Markdown heading.
func headingAnchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docAnchors reads a Markdown document: every heading's anchor (repeated
// headings get -1, -2 as GitHub numbers them) and, for each rule id that
// starts a table row, the anchor of the section it sits in.
func docAnchors(t *testing.T, path string) (map[string]bool, map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchors, section := map[string]bool{}, map[string]string{}
	count := map[string]int{}
	current := ""
	row := regexp.MustCompile("^\\| `([a-z0-9_]+)` \\|")
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	fence := false
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence {
			continue
		}
		if h := strings.TrimLeft(l, "#"); h != l && strings.HasPrefix(h, " ") {
			a := headingAnchor(strings.ReplaceAll(h, "`", ""))
			if n := count[a]; n > 0 {
				count[a]++
				a += "-" + string(rune('0'+n))
			} else {
				count[a] = 1
			}
			anchors[a] = true
			current = a
			continue
		}
		if m := row.FindStringSubmatch(l); m != nil {
			if _, ok := section[m[1]]; !ok {
				section[m[1]] = current
			}
		}
	}
	return anchors, section
}

// TestHelpURIsNameTheirSections: every lint rule's helpUri is the section of
// docs/lint.md whose table lists it; every other rule's is docs/ci.md's
// severity mapping, which exists.
func TestHelpURIsNameTheirSections(t *testing.T) {
	_, section := docAnchors(t, filepath.Join("..", "..", "docs", "lint.md"))
	for _, r := range lint.Rules().Rules {
		want := RepositoryURL + "/blob/main/docs/lint.md#" + section[r.ID]
		if section[r.ID] == "" || helpURI(r.ID) != want {
			t.Errorf("%s: helpUri %s, want %s", r.ID, helpURI(r.ID), want)
		}
	}
	ci, _ := docAnchors(t, filepath.Join("..", "..", "docs", "ci.md"))
	for _, op := range []string{"check", "memo", "probe", "preflight"} {
		for _, r := range RulesOf(op) {
			u := helpURI(r.ID)
			a := strings.TrimPrefix(u, RepositoryURL+"/blob/main/docs/ci.md#")
			if a == u || !ci[a] {
				t.Errorf("%s: helpUri %s names no section of docs/ci.md", r.ID, u)
			}
		}
	}
}
