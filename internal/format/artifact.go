package format

import (
	"bytes"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// PlaceholderArtifact is the artifact SARIF names when no file of the
// repository lists the URLs (a URL given on the command line, stdin): a
// fixed relative path, so code scanning accepts the upload and an alert
// keeps its location across runs (docs/ci.md).
const PlaceholderArtifact = ".payability/endpoints"

// MaxArtifactRead bounds how much of an artifact file is read to find the
// line of each URL; past it the file is named but no line is found.
const MaxArtifactRead = 1 << 20

// Artifact is the file of the repository that lists the URLs of a run:
// SARIF locates every result there, at the first line naming its URL when
// the file's text is known. The zero value is PlaceholderArtifact.
type Artifact struct {
	uri string
	// at is where each token and each trimmed line of the file first
	// appears (nil when the text is not known).
	at map[string]region
}

// NewArtifact names the file at path; content is its text (nil when it
// could not be read, or is over MaxArtifactRead: then every result is at
// line 1). A relative path is relative to the working directory, which is
// the repository's root in CI; it becomes a relative URI reference
// (slash-separated, percent-encoded). An absolute path under the working
// directory wd becomes relative to it; any other absolute path is a file:
// URI, which code scanning makes relative to the checkout when it lies
// under it. No URI of another scheme is ever named.
func NewArtifact(path, wd string, content []byte) Artifact {
	a := Artifact{uri: artifactURI(path, wd)}
	if content != nil && len(content) <= MaxArtifactRead {
		a.at = indexLines(strings.Split(string(bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))), "\n"))
	}
	return a
}

// URI is the artifactLocation.uri of the file.
func (a Artifact) URI() string {
	if a.uri == "" {
		return PlaceholderArtifact
	}
	return a.uri
}

func artifactURI(path, wd string) string {
	if path == "" || path == "-" {
		return PlaceholderArtifact
	}
	p := filepath.Clean(path)
	if filepath.IsAbs(p) {
		if wd != "" {
			if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return relativeURI(rel)
			}
		}
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
	}
	if p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
		if wd != "" {
			return artifactURI(filepath.Join(wd, p), "")
		}
		return PlaceholderArtifact
	}
	return relativeURI(p)
}

// relativeURI is a relative path as a relative URI reference: a first
// segment with a colon is prefixed ./ by net/url, so it never reads as a
// scheme.
func relativeURI(rel string) string {
	return (&url.URL{Path: filepath.ToSlash(rel)}).String()
}

// region is where a URL is named in the artifact: 1-based line and columns
// in UTF-16 code units (the run's columnKind); endColumn is the column
// after the URL. A URL the text does not name is at the start of line 1.
type region struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

// indexLines records, for every line, each token (a maximal run between
// the line's ends, blanks, quotes, angle brackets and commas) and the line
// itself trimmed of blanks, a YAML list's "- " and quotes, with the region
// of its first appearance; so a URL is found in one look-up whatever the
// size of the file, also one with blanks or quotes of its own when it is
// alone on its line.
func indexLines(lines []string) map[string]region {
	at := map[string]region{}
	add := func(i int, line string, start int, tok string) {
		if tok == "" {
			return
		}
		if _, seen := at[tok]; !seen {
			col := utf16Len(line[:start]) + 1
			at[tok] = region{i + 1, col, i + 1, col + utf16Len(tok)}
		}
	}
	for i, line := range lines {
		start := -1
		for j := 0; j <= len(line); j++ {
			if j == len(line) || tokenEdge(line[j]) {
				if start >= 0 {
					add(i, line, start, line[start:j])
					start = -1
				}
			} else if start < 0 {
				start = j
			}
		}
		t := strings.Trim(line, " \t")
		t = strings.Trim(strings.TrimPrefix(t, "- "), " \t")
		if len(t) >= 2 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
			t = t[1 : len(t)-1]
		}
		if k := strings.Index(line, t); t != "" && k >= 0 {
			add(i, line, k, t)
		}
	}
	return at
}

// find returns the first line naming u as a whole token or as the whole
// (trimmed) line, or the start of line 1.
func (a Artifact) find(u string) region {
	if r, ok := a.at[u]; ok && u != "" {
		return r
	}
	return region{1, 1, 1, 1}
}

func tokenEdge(c byte) bool {
	return strings.IndexByte(" \t\"'<>,", c) >= 0
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }
