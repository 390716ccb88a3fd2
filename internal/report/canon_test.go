package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// referenceCanonical is how the canonical form was built before canon.go:
// jcs.Transform, then every number of its output checked with
// encoding/json's tokenizer. canonicalBytes must agree with it on every
// input, bytes and error alike.
func referenceCanonical(raw []byte) ([]byte, error) {
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, ErrInvalidJSON
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, ErrInvalidJSON
		}
		if n, ok := tok.(json.Number); ok && !safeInteger(string(n)) {
			return nil, ErrUnsafeNumber
		}
	}
}

// oddInputs are valid and invalid JSON texts at the edges of the grammar,
// of RFC 8785 and of jcs's own checks.
var oddInputs = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `true`, `null`, ` {"a" : [ 1 , 2 ] } `, "\t\n\r{}\n",
	`{"b":1,"a":2,"A":3,"":4,"aa":5,"\u0080":6,"€":7,"😀":8,"\ue000":9,"\uffff":10}`,
	`{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{"😀":1,"\ud83d\ude00":2}`,
	`"\u00e9\ud83d\ude00\u2028\u2029\u0041\/\u001F\u007f\u0000"`, `"\uD83D\uDE00"`,
	`"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800x"`, `"\ud800\\u"`, `"\u12"`, `"\u12g4"`, `"\x"`,
	"\"a\x01b\"", "\"a\x7fb\"", "\"\xff\"", "\"\xed\xa0\x80\"", "\"\xc3\xa9\"", "\"\xef\xbf\xbd\"",
	`<`, "\xef\xbb\xbf{}", ``, ` `, `{`, `[1,]`, `[,1]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`,
	`[1 2]`, `1 2`, `{"a":1}x`, `truex`, `nul`, `[true"x"]`, `{"a":true"b":1}`, `"abc`,
	`1.0`, `1e2`, `1E+2`, `1e-2`, `-1.5`, `0.1`, `1e21`, `1e400`, `1e-400`, `-1e400`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`,
	`9007199254740991`, `-9007199254740991`, `9007199254740992`, `9007199254740993`, `9.007199254740991E15`,
	`999999999999999`, `1000000000000000`, `123456789012345678901234567890`, `0.0`, `-0.0`, `-0e5`,
	`[0,-0,1E0,[[]],{}]`, `{"a":{"b":{"c":[{"d":null}]}}}`, `[1.5, "x"`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestCanonicalAgreesWithTheReference(t *testing.T) {
	for _, in := range oddInputs {
		got, gotErr := canonicalBytes([]byte(in))
		want, wantErr := referenceCanonical([]byte(in))
		if !errors.Is(gotErr, wantErr) || !bytes.Equal(got, want) {
			name := in
			if len(name) > 60 {
				name = name[:60] + "…"
			}
			t.Errorf("%q: got %q %v, want %q %v", name, got, gotErr, want, wantErr)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, in := range oddInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, gotErr := canonicalBytes(in)
		want, wantErr := referenceCanonical(in)
		if !errors.Is(gotErr, wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q %v, want %q %v", in, got, gotErr, want, wantErr)
		}
	})
}

func BenchmarkSign(b *testing.B) {
	key := seededKey(b, 7)
	for _, name := range []string{"check", "probe"} {
		doc := goldenDocs()[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sign(doc, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
