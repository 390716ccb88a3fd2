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
	uri   string
	lines []string
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
		a.lines = strings.Split(string(bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))), "\n")
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

// find returns the first line naming u as a whole token (bounded by the
// line's ends, blanks, quotes, angle brackets or a comma).
func (a Artifact) find(u string) region {
	if u != "" {
		for i, line := range a.lines {
			for off := 0; off < len(line); {
				j := strings.Index(line[off:], u)
				if j < 0 {
					break
				}
				at := off + j
				end := at + len(u)
				if (at == 0 || tokenEdge(line[at-1])) && (end == len(line) || tokenEdge(line[end])) {
					col := utf16Len(line[:at]) + 1
					return region{i + 1, col, i + 1, col + utf16Len(u)}
				}
				off = at + 1
			}
		}
	}
	return region{1, 1, 1, 1}
}

func tokenEdge(c byte) bool {
	return strings.IndexByte(" \t\"'<>,", c) >= 0
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }
