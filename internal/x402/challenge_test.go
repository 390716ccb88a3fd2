package x402

import (
	"encoding/base64"
	"encoding/json"
	"net/textproto"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseBodyLegs(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		parseable bool
		read      bool
		memo      string
		resource  string
	}{
		{"empty", "", false, false, "", ""},
		{"html", "<html>", false, false, "", ""},
		{"array", "[]", true, false, "", ""},
		{"no accepts: the top-level memo still falls back (R5)", `{"memo":"m-12345678"}`, true, true, "m-12345678", ""},
		{"accepts empty: the top-level memo still falls back (R5)", `{"accepts":[],"memo":"m-12345678"}`, true, true, "m-12345678", ""},
		{"accepts[0] not object: the top-level memo still falls back (R5)", `{"accepts":[7],"memo":"m-12345678"}`, true, true, "m-12345678", ""},
		{"accepts[0] not object", `{"accepts":["x"]}`, true, true, "", ""},
		{"extra memo", `{"accepts":[{"extra":{"memo":"a"}}],"memo":"b"}`, true, true, "a", ""},
		{"empty extra memo falls back", `{"accepts":[{"extra":{"memo":""}}],"memo":"b"}`, true, true, "b", ""},
		{"resource string", `{"accepts":[{"resource":"u"}]}`, true, true, "", "u"},
		{"resource object is absent (R1)", `{"accepts":[{"resource":{"url":"u"}}]}`, true, true, "", ""},
		{"trailing garbage", `{} x`, false, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leg, parseable := ParseBody([]byte(tt.body))
			if parseable != tt.parseable || leg.Read != tt.read || leg.Memo != tt.memo || leg.Resource != tt.resource {
				t.Errorf("got parseable=%v read=%v memo=%q resource=%q", parseable, leg.Read, leg.Memo, leg.Resource)
			}
		})
	}
}

func TestAmounts(t *testing.T) {
	leg, _ := ParseBody([]byte(`{"accepts":[{"amount":10000,"maxAmountRequired":"01"}]}`))
	if leg.Amount != "" || leg.MaxAmountRequired != "01" {
		t.Errorf("amount %q max %q", leg.Amount, leg.MaxAmountRequired)
	}
	leg, _ = ParseBody([]byte(`{"accepts":[{"amount":"1e4"}]}`))
	if leg.Amount != "" {
		t.Errorf("non-digit amount read as %q", leg.Amount)
	}
}

func TestHeaderResource(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	// R1: the header leg's two places are the top-level resource.url and
	// accepts[0].resource.url; a string resource in either place is not read.
	tests := map[string][2]string{
		`{"resource":{"url":"a"},"accepts":[{"resource":"b"}]}`:         {"a", ""},
		`{"resource":{},"accepts":[{"resource":"b"}]}`:                  {"", ""},
		`{"resource":"c","accepts":[{"resource":"b"}]}`:                 {"", ""},
		`{"accepts":[{"resource":{"url":"b"}}]}`:                        {"", "b"},
		`{"resource":{"url":"a"},"accepts":[{"resource":{"url":"b"}}]}`: {"a", "b"},
		`{"resource":{"url":"a"}}`:                                      {"a", ""},
		`{"resource":{"url":""},"accepts":[{"resource":{"url":7}}]}`:    {"", ""},
	}
	for in, want := range tests {
		leg, ok := ParseHeader(enc(in))
		if !ok || leg.Resource != want[0] || leg.Resource2 != want[1] {
			t.Errorf("%s: resources %q %q ok=%v, want %q", in, leg.Resource, leg.Resource2, ok, want)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"resource":{"url":"u"},"accepts":[{"amount":"1","payTo":"p","extra":{"memo":"m"}}]}`)))
	f.Add("e30")
	f.Add(" e30= \n")
	f.Add("bogus-not-a-payment-header")
	f.Fuzz(func(t *testing.T, v string) {
		leg, ok := ParseHeader(v)
		if !ok && (leg.Read || leg.Memo != "" || leg.Census != nil) {
			t.Fatal("undecodable header carries fields")
		}
		if leg.Amount != "" && !digits.MatchString(leg.Amount) {
			t.Fatalf("amount %q is not digits", leg.Amount)
		}
	})
}

func FuzzParseBody(f *testing.F) {
	f.Add([]byte(`{"x402Version":1,"accepts":[{"amount":"1","maxAmountRequired":"1","payTo":"p","resource":"u","extra":{"memo":"m","usdc_token_account":"t"}}],"memo":"m"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		leg, parseable := ParseBody(b)
		if !parseable && leg.Read {
			t.Fatal("unparseable body read")
		}
		if leg.Read && leg.Census == nil {
			t.Fatal("read leg without census")
		}
		if !utf8.ValidString(leg.Memo) {
			t.Fatal("memo is not valid UTF-8")
		}
	})
}

// DecodeJSON accepts exactly what the JSON grammar accepts (R17), numbers of
// any magnitude included, and keeps numbers out of the string fields (R3).
func TestDecodeJSONIsTheJSONGrammar(t *testing.T) {
	for _, in := range []string{
		`{}`, ` {"a":1} `, `1e400`, `-1e400`, `{"n":1e-400}`, `[` + "9999999999999999999999999999999999999999e999" + `]`,
		``, ` `, `{} x`, `{}{}`, `1 2`, `{},`, `}`, `123abc`, "\ufeff{}", "{}\u00a0", `nul`, `"\ud800"`, "\"\xff\"",
	} {
		_, got := DecodeJSON([]byte(in))
		if want := json.Valid([]byte(in)); got != want {
			t.Errorf("DecodeJSON(%q) ok = %v, json.Valid says %v", in, got, want)
		}
	}
	leg, ok := ParseBody([]byte(`{"n":1e400,"accepts":[{"amount":1e400,"payTo":"P"}]}`))
	if !ok || !leg.Read || leg.Amount != "" || leg.PayTo != "P" {
		t.Errorf("1e400 body: ok=%v read=%v amount=%q payTo=%q", ok, leg.Read, leg.Amount, leg.PayTo)
	}
	if _, ok := DecodeHeaderValue(base64.StdEncoding.EncodeToString([]byte(`{"n":1e400}`))); !ok {
		t.Error("a header object holding 1e400 is undecodable")
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `1e400`, `{} x`, `[1,2]`, `"a"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, ok := DecodeJSON(b); ok != json.Valid(b) {
			t.Fatalf("DecodeJSON(%q) = %v, json.Valid = %v", b, ok, !ok)
		}
	})
}

// R30: strings are compared after JSON decoding; an invalid UTF-8 byte or a
// lone surrogate escape decodes to U+FFFD.
func TestStringsCompareAfterDecoding(t *testing.T) {
	leg, ok := ParseBody([]byte(`{"accepts":[{"payTo":"\ud800","extra":{"memo":"\udc00"}}]}`))
	if !ok || leg.PayTo != "\uFFFD" || leg.Memo != "\uFFFD" {
		t.Errorf("payTo %q memo %q", leg.PayTo, leg.Memo)
	}
}

// R31: a value nested deeper than the decoder's limit (10,000 levels) does
// not parse; one level less does.
func TestNestingLimit(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	if _, ok := DecodeJSON(nest(10000)); !ok {
		t.Error("10,000 levels did not parse")
	}
	if _, ok := DecodeJSON(nest(10001)); ok {
		t.Error("10,001 levels parsed")
	}
}

// HeaderKey is the canonical form of HeaderName: a captured header map
// holds the challenge under it.
func TestHeaderKeyIsCanonical(t *testing.T) {
	if got := textproto.CanonicalMIMEHeaderKey(HeaderName); got != HeaderKey {
		t.Fatalf("CanonicalMIMEHeaderKey(%q) = %q, HeaderKey = %q", HeaderName, got, HeaderKey)
	}
}
