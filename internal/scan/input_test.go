package scan

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/target"
)

func readAll(t *testing.T, input string) ([]Item, Format, error) {
	t.Helper()
	in := NewInput(strings.NewReader(input))
	var items []Item
	for {
		it, err := in.Next()
		if err == io.EOF {
			f, _ := in.Format()
			return items, f, nil
		}
		if err != nil {
			f, _ := in.Format()
			return items, f, err
		}
		items = append(items, it)
	}
}

func TestInputFormats(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		format Format
		want   []Item
	}{
		{"empty input is lines with no entries", "", FormatLines, nil},
		{"only white space", "\n \n\t\n", FormatLines, nil},
		{
			"lines skip blanks and comments and keep line numbers",
			"# sellers\n\nhttps://a.example/x\n   # indented comment\n  https://b.example/y  \r\nhttps://c.example/z",
			FormatLines,
			[]Item{{Line: 3, URL: "https://a.example/x"}, {Line: 5, URL: "https://b.example/y"}, {Line: 6, URL: "https://c.example/z"}},
		},
		{
			"leading blank lines count",
			"\n\n  https://a.example/x\n",
			FormatLines,
			[]Item{{Line: 3, URL: "https://a.example/x"}},
		},
		{
			"a byte-order mark is skipped",
			"\xef\xbb\xbfhttps://a.example/x\n",
			FormatLines,
			[]Item{{Line: 1, URL: "https://a.example/x"}},
		},
		{
			"a fragment is part of the URL, not a comment",
			"https://a.example/x#frag\n",
			FormatLines,
			[]Item{{Line: 1, URL: "https://a.example/x#frag"}},
		},
		{
			"a non-URL line is an entry (the policy refuses it later)",
			"not a url\n",
			FormatLines,
			[]Item{{Line: 1, URL: "not a url"}},
		},
		{
			"JSON array, one string per line",
			"[\n  \"https://a.example/x\",\n  \"https://b.example/y\"\n]\n",
			FormatArray,
			[]Item{{Line: 2, URL: "https://a.example/x"}, {Line: 3, URL: "https://b.example/y"}},
		},
		{
			"JSON array on one line after blank lines",
			"\n\n[\"https://a.example/x\",\"https://b.example/y\"]",
			FormatArray,
			[]Item{{Line: 3, URL: "https://a.example/x"}, {Line: 3, URL: "https://b.example/y"}},
		},
		{
			"JSON array entries that are not strings are refused by line",
			"[\n \"https://a.example/x\",\n 42,\n {\"url\": \"https://b.example\"},\n null,\n [\"https://c.example\"],\n \"\"\n]",
			FormatArray,
			[]Item{
				{Line: 2, URL: "https://a.example/x"},
				{Line: 3, Rule: RuleNotAString},
				{Line: 4, Rule: RuleNotAString},
				{Line: 5, Rule: RuleNotAString},
				{Line: 6, Rule: RuleNotAString},
				{Line: 7, URL: ""},
			},
		},
		{
			"JSON strings are unescaped",
			`["https://a.example/x?a=1\u0026b=2"]`,
			FormatArray,
			[]Item{{Line: 1, URL: "https://a.example/x?a=1&b=2"}},
		},
		{
			"empty JSON array",
			"[]",
			FormatArray,
			nil,
		},
		{
			"discovery document: resources[].resource",
			`{
  "x402Version": 1,
  "resources": [
    {
      "type": "http",
      "accepts": [{"resource": "https://nested.example/not-this", "extra": {"a": [1, 2, {"b": null}]}}],
      "resource": "https://a.example/x"
    },
    {"resource": "https://b.example/y", "resource": "https://b.example/second"},
    {"type": "http"},
    {"resource": 7},
    "https://c.example/bare-string"
  ],
  "pagination": {"limit": 100, "offset": 0, "total": 5}
}`,
			FormatDiscovery,
			[]Item{
				{Line: 7, URL: "https://a.example/x"},
				{Line: 9, URL: "https://b.example/y"},
				{Line: 10, Rule: RuleNotAString},
				{Line: 11, Rule: RuleNotAString},
				{Line: 12, Rule: RuleNotAString},
			},
		},
		{
			"discovery document as the Bazaar lists it: items[].resource",
			`{"x402Version":1,"items":[{"resource":"https://a.example/x","type":"http"}],"pagination":{"limit":1}}`,
			FormatDiscovery,
			[]Item{{Line: 1, URL: "https://a.example/x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, format, err := readAll(t, tt.input)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if format != tt.format {
				t.Errorf("format = %q, want %q", format, tt.format)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("items:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestInputOverlongLineIsRefusedWithoutEcho(t *testing.T) {
	input := "https://a.example/x\nhttps://b.example/" + strings.Repeat("z", 100<<10) + "\nhttps://c.example/y\n"
	got, _, err := readAll(t, input)
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{Line: 1, URL: "https://a.example/x"},
		{Line: 2, Rule: target.RuleTooLong},
		{Line: 3, URL: "https://c.example/y"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestInputMalformedJSONEndsWithLine(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantURLs int
		wantLine int
	}{
		{"syntax error on line 3", "[\n \"https://a.example/x\",\n \"https://b.example/y\" oops\n]", 2, 3},
		{"truncated array", "[\n \"https://a.example/x\",\n", 1, 3},
		{"data after the array", "[\"https://a.example/x\"]\n[]", 1, 2},
		{"discovery document without resources", "{\n \"x402Version\": 1\n}", 0, 3},
		{"discovery resources not an array", "{\"resources\": {\"resource\": \"https://a.example\"}}", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := readAll(t, tt.input)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *InputError", err)
			}
			if ie.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", ie.Line, tt.wantLine, ie)
			}
			if len(got) != tt.wantURLs {
				t.Errorf("entries before the error = %d, want %d", len(got), tt.wantURLs)
			}
			if strings.Contains(err.Error(), "oops") || strings.Contains(err.Error(), "example") {
				t.Errorf("the error echoes the input: %v", err)
			}
		})
	}
}

type failingReader struct{ data string }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestInputReadErrorEndsTheInputAfterItsData(t *testing.T) {
	in := NewInput(&failingReader{data: "https://a.example/x\nhttps://b.example/y"})
	var urls []string
	var err error
	for {
		var it Item
		it, err = in.Next()
		if err != nil {
			break
		}
		urls = append(urls, it.URL)
	}
	if len(urls) != 2 || err == nil || err == io.EOF {
		t.Errorf("urls = %v, err = %v; want both URLs, then the read error", urls, err)
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		input string
		want  int
	}{
		{"# c\n\nhttps://a.example\nnot a url\n", 2},
		{`["https://a.example", 1, "x"]`, 3},
		{`{"resources":[{"resource":"https://a.example"},{}]}`, 2},
	}
	for _, tt := range tests {
		got, err := Count(strings.NewReader(tt.input))
		if err != nil || got != tt.want {
			t.Errorf("Count(%q) = %d, %v; want %d", tt.input, got, err, tt.want)
		}
	}
}
