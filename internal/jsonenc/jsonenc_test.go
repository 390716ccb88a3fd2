package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reference is encoding/json's encoding of s, with or without HTML escaping.
func reference(t testing.TB, s string, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var strings_ = []string{
	"", "plain", "https://seller.example/api?a=1&b=<2>", `quote " and \ backslash`,
	"\x00\x01\x07\b\f\n\r\t\x1f\x7f", "é ü — 日本", "\u2028\u2029", "bad \xff\xfe utf8 \xc3",
	"trunc \xe2\x80", "\U0001F600 emoji", "<script>&amp;</script>", "\ufffd literal",
}

func TestAppendStringMatchesEncoder(t *testing.T) {
	for _, s := range strings_ {
		for _, html := range []bool{true, false} {
			got := AppendString([]byte("prefix"), s, html)
			want := append([]byte("prefix"), reference(t, s, html)...)
			if !bytes.Equal(got, want) {
				t.Errorf("AppendString(%q, html=%v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

func TestAppendPointers(t *testing.T) {
	tr, fa, n, s := true, false, -42, "a<b"
	for _, tc := range []struct {
		got  []byte
		want any
	}{
		{AppendBoolPtr(nil, nil), (*bool)(nil)},
		{AppendBoolPtr(nil, &tr), &tr},
		{AppendBoolPtr(nil, &fa), &fa},
		{AppendIntPtr(nil, nil), (*int)(nil)},
		{AppendIntPtr(nil, &n), &n},
		{AppendStringPtr(nil, nil, true), (*string)(nil)},
		{AppendStringPtr(nil, &s, true), &s},
	} {
		want, err := json.Marshal(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tc.got, want) {
			t.Errorf("got %s, want %s", tc.got, want)
		}
	}
}

func FuzzAppendStringMatchesEncoder(f *testing.F) {
	for _, s := range strings_ {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if got, want := AppendString(nil, s, html), reference(t, s, html); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q, html=%v) = %s, want %s", s, html, got, want)
		}
	})
}

func TestAppendStringDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = AppendString(buf[:0], "https://seller.example/a?b=1&c=<\u2028\xff>", true) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
