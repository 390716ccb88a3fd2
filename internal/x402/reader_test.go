package x402

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// readerCases are documents where a single-pass reader could read otherwise
// than a decode into maps: keys written twice, escaped keys and values,
// broken UTF-8, nesting, numbers, and every way a document can be invalid.
var readerCases = append([]string{
	// More key names than the census keeps without allocating (24 per object).
	`{"accepts":[{` + manyKeys("k", 40) + `,"extra":{` + manyKeys("e", 30) + `,"memo":"m"}}]}`,
	`{"accepts":[{` + manyKeys("k", 40) + `,"extra":{"a":1},"extra":{` + manyKeys("e", 30) + `}}]}`,
}, baseReaderCases...)

// manyKeys is n members "<prefix>0":0, … (the last ones written twice).
func manyKeys(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", fmt.Sprintf("%s%d", prefix, i%(n-3)), i)
	}
	return b.String()
}

var baseReaderCases = []string{
	`{"x402Version":1,"accepts":[{"amount":"1","maxAmountRequired":"1","payTo":"p","resource":"u","description":"d","extra":{"memo":"m","usdc_token_account":"t"}}],"memo":"m"}`,
	`{"accepts":[{"payTo":"a"}],"accepts":[]}`,
	`{"accepts":[],"accepts":[{"payTo":"b"}]}`,
	`{"accepts":[{"payTo":"a","payTo":7}]}`,
	`{"accepts":[{"payTo":7,"payTo":"a"}]}`,
	`{"accepts":[{"extra":{"memo":"a","x":1},"extra":{"y":2}}]}`,
	`{"accepts":[{"extra":{"memo":"a"},"extra":"s"}]}`,
	`{"accepts":[{"resource":"u","resource":{"url":"v"}}]}`,
	`{"accepts":[{"resource":{"url":"v"},"resource":"u"}]}`,
	`{"resource":{"url":"a","url":"b"},"resource":{"x":1}}`,
	`{"resource":{"url":"a"},"accepts":[{"resource":{"url":"b","url":null}}]}`,
	`{"memo":"a","memo":""}`, `{"memo":"","memo":"b"}`, `{"memo":"a","memo":1}`,
	`{"accepts":[{"pay\u0054o":"e","\u0065xtra":{"m\u0065mo":"x"}}],"m\u0065mo":"y"}`,
	`{"accepts":[{"payTo":"\ud800","extra":{"memo":"\udc00\u0041"}}]}`,
	"{\"accepts\":[{\"payTo\":\"\xff\xfe\",\"\xffkey\":1}]}",
	`{"accepts":[{"amount":"010","maxAmountRequired":"1e4"}]}`,
	`{"accepts":[{"amount":1e400,"maxAmountRequired":-0.5E-7}]}`,
	`{"accepts":["x",{"payTo":"p"}]}`, `{"accepts":[null]}`, `{"accepts":{"payTo":"p"}}`, `{"accepts":[[{"payTo":"p"}]]}`,
	`{"accepts":[{}],"error":"e","reason":"","detail":7}`, `{"reason":"r"}`, `{"detail":"d","detail":""}`,
	`[]`, `"s"`, `1`, `-0`, `true`, `null`, ` {} `, "\t{}\r\n",
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a":1 "b":2}`, `{} x`, `{}{}`, `1 2`,
	`01`, `1.`, `.5`, `1e`, `1e+`, `-`, `+1`, `tru`, `nul`, `falsey`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\nb\"", "\"\x00\"",
	"\ufeff{}", "{}\u00a0", "{}\x00", `"unterminated`, `{"a":"\"}`, `{"accepts":[{"payTo":"a\"b\\c\/d"}]}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"accepts":[{"extra":` + strings.Repeat(`{"a":`, 9997) + `1` + strings.Repeat(`}`, 9997) + `}]}`,
	`{"accepts":[{"extra":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat(`}`, 9998) + `}]}`,
}

func checkReaderAgainstReference(t *testing.T, b []byte) {
	t.Helper()
	gotLeg, gotOK := ParseBody(b)
	wantLeg, wantOK := refParseBody(b)
	if gotOK != wantOK || !reflect.DeepEqual(gotLeg, wantLeg) {
		t.Fatalf("body %q:\n got %v %+v\nwant %v %+v", b, gotOK, gotLeg, wantOK, wantLeg)
	}
	if leg, ok := ReadBody(b, false); ok != wantOK || leg.Census != nil || leg.Memo != wantLeg.Memo || leg.Resource != wantLeg.Resource {
		t.Fatalf("body %q without census: %v %+v", b, ok, leg)
	}
	gp, gr := RejectionReason(b)
	wp, wr := refRejectionReason(b)
	if gp != wp || gr != wr {
		t.Fatalf("rejection reason %q: got %v %v, want %v %v", b, gp, gr, wp, wr)
	}
	if ok := gotOK; ok != json.Valid(b) {
		t.Fatalf("%q: parseable %v, json.Valid %v", b, ok, !ok)
	}
	h := base64.StdEncoding.EncodeToString(b)
	gotH, gotHOK := ParseHeader(h)
	wantH, wantHOK := refParseHeader(h)
	if gotHOK != wantHOK || !reflect.DeepEqual(gotH, wantH) {
		t.Fatalf("header of %q:\n got %v %+v\nwant %v %+v", b, gotHOK, gotH, wantHOK, wantH)
	}
}

// The single-pass reader reads every case exactly as the map-based reading.
func TestReaderMatchesReference(t *testing.T) {
	for _, c := range readerCases {
		checkReaderAgainstReference(t, []byte(c))
	}
}

func FuzzReaderMatchesReference(f *testing.F) {
	for _, c := range readerCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkReaderAgainstReference(t, b) })
}

// benchBody is a realistic v1 challenge body (the shape of the verdict
// benchmarks).
const benchBody = `{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"10000","amount":"10000","resource":"https://seller.example/api/v1/weather/current?city=montreal","description":"Current weather for one city, as JSON.","mimeType":"application/json","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","maxTimeoutSeconds":300,"asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","outputSchema":{"input":{"type":"http","method":"GET","queryParams":{"city":"string"}},"output":{"type":"object","properties":{"temp_c":{"type":"number"},"conditions":{"type":"string"}}}},"extra":{"feePayer":"5a2xontTE9Zr3upmeB6VuDAQVx7sR1DEbscMUCwSWdwZ","usdc_token_account":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","memo":"pv-7f3a9c2e41d84b6f"}}]}`

// BenchmarkReader compares the single-pass reader with the map-based reading
// it replaced, in one run.
func BenchmarkReader(b *testing.B) {
	body := []byte(benchBody)
	b.Run("reference_maps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = refParseBody(body)
		}
	})
	b.Run("single_pass_census", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ReadBody(body, true)
		}
	})
	b.Run("single_pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ReadBody(body, false)
		}
	})
}
