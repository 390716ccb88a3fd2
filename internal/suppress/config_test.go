package suppress

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseConfigAcceptsAFullFile(t *testing.T) {
	data := []byte(`{
  "ignore": [
    {"rule": "status_not_402", "url": "https://api.example/free", "reason": "free on purpose"},
    {"rule": "fee_payer_missing", "field": "accepts[0].extra.feePayer", "reason": "the facilitator adds it", "until": "2027-01-31"},
    {"rule": "refused/*", "url": "https://staging.example/*", "reason": "staging"}
  ],
  "baseline": "payability-baseline.json"
}`)
	got, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Ignore) != 3 || got.Baseline != "payability-baseline.json" {
		t.Fatalf("got %+v", got)
	}
	if ig := got.Ignore[1]; ig.Until != "2027-01-31" || ig.Field != "accepts[0].extra.feePayer" || ig.Reason != "the facilitator adds it" {
		t.Errorf("entry 1: %+v", ig)
	}
	if _, err := ParseConfig([]byte(`{}`)); err != nil {
		t.Errorf("an empty object: %v", err)
	}
}

// One file per refusal: each names the field, its line and column, and a
// static reason, never a value of the file.
func TestParseConfigRefusesEachBadFile(t *testing.T) {
	cases := []struct {
		file, field  string
		line, column int
		reason       string
	}{
		{"unknown_key", "", 1, 57, "unknown key (allowed: baseline, ignore)"},
		{"unknown_entry_key", "ignore[0]", 1, 55, "unknown key (allowed: field, reason, rule, until, url)"},
		{"missing_reason", "ignore[0].reason", 1, 13, "a reason is required"},
		{"blank_reason", "ignore[0].reason", 1, 50, "want 1 to 500 printable characters"},
		{"long_reason", "ignore[0].reason", 1, 37, "want 1 to 500 printable characters"},
		{"control_in_reason", "ignore[0].reason", 1, 37, "want 1 to 500 printable characters"},
		{"missing_rule", "ignore[0].rule", 1, 13, "a rule id is required"},
		{"bad_rule", "ignore[0].rule", 1, 22, "want a rule id"},
		{"bad_until", "ignore[0].until", 1, 64, "want a date YYYY-MM-DD"},
		{"until_not_string", "ignore[0].until", 1, 64, "wrong type (want a string)"},
		{"ignore_not_array", "ignore", 1, 12, "wrong type (want an array)"},
		{"element_not_object", "ignore[0]", 1, 13, "wrong type (want an object)"},
		{"not_an_object", "", 1, 1, "wrong type (want an object)"},
		{"duplicate_entry", "ignore[1]", 1, 56, "repeats an earlier entry's rule, url and field"},
		{"repeated_key", "ignore", 1, 16, "repeated key"},
		{"trailing_data", "", 1, 24, "trailing data after the document"},
		{"empty_baseline", "baseline", 1, 14, "want a file path"},
		{"truncated", "ignore", 2, 1, "JSON syntax error or unexpected end"},
	}
	files, _ := filepath.Glob("testdata/bad/*.json")
	if len(files) != len(cases) {
		t.Errorf("%d files in testdata/bad, %d cases: one case per file", len(files), len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/bad", tc.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseConfig(data)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if ce.Field != tc.field || ce.Line != tc.line || ce.Column != tc.column || !strings.HasPrefix(ce.Reason, tc.reason) {
				t.Errorf("got %q at %d:%d (%q), want %q at %d:%d (%q)", ce.Field, ce.Line, ce.Column, ce.Reason, tc.field, tc.line, tc.column, tc.reason)
			}
			for _, secret := range []string{"staging only", "xxxxxxxxxx", "\there", "b.json", "status not", "2027"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error %q quotes the file", err)
				}
			}
		})
	}
}

func TestParseConfigLimits(t *testing.T) {
	over := []byte(`{"baseline": "` + strings.Repeat("a", MaxConfigBytes) + `"}`)
	if _, err := ParseConfig(over); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Errorf("a file over the cap: %v", err)
	}
	entries := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"ignore": [`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"rule": "r` + strings.Repeat("x", i%7) + `", "url": "https://e.example/` + string(rune('a'+i%26)) + `/` + strconv.Itoa(i) + `", "reason": "r"}`)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	if _, err := ParseConfig(entries(MaxIgnores)); err != nil {
		t.Errorf("%d entries: %v", MaxIgnores, err)
	}
	if _, err := ParseConfig(entries(MaxIgnores + 1)); err == nil || !strings.Contains(err.Error(), "at most 1000 entries") {
		t.Errorf("%d entries: %v", MaxIgnores+1, err)
	}
	edge := `{"ignore": [{"rule": "` + strings.Repeat("r", MaxRule) + `", "reason": "` + strings.Repeat("é", MaxReason) + `"}]}`
	if _, err := ParseConfig([]byte(edge)); err != nil {
		t.Errorf("a rule of %d bytes and a reason of %d characters: %v", MaxRule, MaxReason, err)
	}
	past := `{"ignore": [{"rule": "` + strings.Repeat("r", MaxRule+1) + `", "reason": "x"}]}`
	if _, err := ParseConfig([]byte(past)); err == nil {
		t.Errorf("a rule of %d bytes was accepted", MaxRule+1)
	}
}

// An entry holds through its until day (UTC) and has expired from the
// first instant of the next.
func TestIgnoreExpiresAfterItsDay(t *testing.T) {
	c, err := ParseConfig([]byte(`{"ignore": [{"rule": "r", "reason": "x", "until": "2027-01-31"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ig := c.Ignore[0]
	for _, tc := range []struct {
		now  time.Time
		want bool
	}{
		{time.Date(2027, 1, 31, 23, 59, 59, 999999999, time.UTC), false},
		{time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2027, 1, 31, 20, 0, 0, 0, time.FixedZone("UTC-5", -5*3600)), true}, // 01:00 UTC on Feb 1
	} {
		if got := ig.Expired(tc.now); got != tc.want {
			t.Errorf("at %s: expired %v, want %v", tc.now, got, tc.want)
		}
	}
	if (Ignore{Rule: "r"}).Expired(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("an entry with no until expired")
	}
}
