package verdict

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

const url = "https://seller.example/api/paid"

// challenge builds a fleet-shaped 402: body accepts[0] plus a v2 header.
type challenge struct {
	body   map[string]any // accepts[0]
	top    map[string]any // extra top-level body fields
	header map[string]any // header accepts[0]; nil = no header
	hres   any            // header top-level resource
	raw    string         // raw header value override
	status int
}

func fleet() challenge {
	return challenge{
		body: map[string]any{
			"scheme": "exact", "network": "solana", "amount": "10000", "maxAmountRequired": "10000",
			"payTo": "Wallet111", "resource": url, "description": "a paid call",
			"extra": map[string]any{"usdc_token_account": "Token111", "memo": "pv-abcdef123"},
		},
		header: map[string]any{
			"scheme": "exact", "amount": "10000", "payTo": "Wallet111",
			"extra": map[string]any{"memo": "pv-abcdef123", "usdc_token_account": "Token111"},
		},
		hres:   map[string]any{"url": url},
		status: 402,
	}
}

func (c challenge) capture() capture.Capture {
	root := map[string]any{"x402Version": 1, "accepts": []any{c.body}}
	for k, v := range c.top {
		root[k] = v
	}
	body, _ := json.Marshal(root)
	h := capture.Header{}
	switch {
	case c.raw != "":
		h["Payment-Required"] = []string{c.raw}
	case c.header != nil:
		hroot := map[string]any{"x402Version": 2, "accepts": []any{c.header}}
		if c.hres != nil {
			hroot["resource"] = c.hres
		}
		hb, _ := json.Marshal(hroot)
		h["Payment-Required"] = []string{base64.StdEncoding.EncodeToString(hb)}
	}
	return capture.Capture{Outcome: capture.OK, Status: c.status, Header: h, Body: body}
}

func with(f func(*challenge)) capture.Capture {
	c := fleet()
	f(&c)
	return c.capture()
}

func extra(m map[string]any) map[string]any { return m["extra"].(map[string]any) }

func TestCheckStates(t *testing.T) {
	tests := []struct {
		name string
		cap  capture.Capture
		want State
	}{
		{"every field check passes", fleet().capture(), Populated},
		{"fetch failed", capture.Capture{Outcome: capture.Failed}, NotA402},
		{"timeout", capture.Capture{Outcome: capture.Timeout}, NotA402},
		{"status 200", with(func(c *challenge) { c.status = 200 }), NotA402},
		{"302 is the capture", with(func(c *challenge) { c.status = 302 }), NotA402},
		{"over cap outcome", capture.Capture{Outcome: capture.OverCap, Status: 402}, NotA402},
		{"body of 65,537 bytes", capture.Capture{Outcome: capture.OK, Status: 402, Body: make([]byte, 65537)}, NotA402},
		{"body resource differs", with(func(c *challenge) { c.body["resource"] = url + "/" }), ResourceMismatch},
		{"header resource differs", with(func(c *challenge) { c.hres = map[string]any{"url": "https://other.example/"} }), ResourceMismatch},
		{"resource mismatch wins over missing header", with(func(c *challenge) { c.body["resource"] = "x"; c.header = nil }), ResourceMismatch},
		{"header absent", with(func(c *challenge) { c.header = nil }), HeaderMissing},
		{"header url-safe base64", with(func(c *challenge) { c.raw = "eyJ4NDAyVmVyc2lvbiI6Mn0_" }), HeaderMissing},
		{"header decodes to array: decoded, carries nothing (R4)", with(func(c *challenge) { c.raw = base64.StdEncoding.EncodeToString([]byte("[1]")) }), Unconfigured},
		{"header missing wins over amounts-only", with(func(c *challenge) {
			c.header = nil
			delete(c.body, "payTo")
			c.body["extra"] = map[string]any{}
		}), HeaderMissing},
		{"amounts only", with(func(c *challenge) {
			delete(c.body, "payTo")
			c.body["extra"] = map[string]any{}
			c.header = map[string]any{"amount": "10000"}
		}), AmountsOnly},
		{"amounts only with header amount absent", with(func(c *challenge) {
			delete(c.body, "payTo")
			c.body["extra"] = map[string]any{}
			c.header = map[string]any{}
		}), AmountsOnly},
		{"amount number-typed", with(func(c *challenge) { c.body["amount"] = 10000 }), Unconfigured},
		{"maxAmountRequired differs", with(func(c *challenge) { c.body["maxAmountRequired"] = "20000" }), Unconfigured},
		{"maxAmountRequired absent is consistent", with(func(c *challenge) { delete(c.body, "maxAmountRequired") }), Populated},
		{"header amount differs", with(func(c *challenge) { c.header["amount"] = "20000" }), Unconfigured},
		{"header amount absent fails equality", with(func(c *challenge) { delete(c.header, "amount") }), Unconfigured},
		{"recipient absent", with(func(c *challenge) { c.body["payTo"] = "" }), Unconfigured},
		{"token account absent", with(func(c *challenge) { delete(extra(c.body), "usdc_token_account") }), Unconfigured},
		{"memo falls back to top level", with(func(c *challenge) {
			delete(extra(c.body), "memo")
			c.top = map[string]any{"memo": "pv-abcdef123"}
		}), Populated},
		{"memo absent", with(func(c *challenge) { delete(extra(c.body), "memo") }), Unconfigured},
		{"header memo differs", with(func(c *challenge) { extra(c.header)["memo"] = "pv-other0000" }), Unconfigured},
		{"header payTo differs", with(func(c *challenge) { c.header["payTo"] = "Other" }), Unconfigured},
		{"resource absent in body", with(func(c *challenge) { delete(c.body, "resource") }), Unconfigured},
		{"body resource as object is absent (R1)", with(func(c *challenge) { c.body["resource"] = map[string]any{"url": url} }), Unconfigured},
		{"header resource from accepts[0]", with(func(c *challenge) { c.hres = nil; c.header["resource"] = url }), Populated},
		{"long description never changes state", with(func(c *challenge) { c.body["description"] = strings.Repeat("é", 501) }), Populated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Check(url, tt.cap).State; got != tt.want {
				t.Errorf("state = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCheckBodyNotJSONWithHeader(t *testing.T) {
	c := fleet().capture()
	c.Body = []byte("<html>402</html>")
	r := Check(url, c)
	if r.State != Unconfigured || *r.Factors.BodyParseable {
		t.Errorf("got %s parseable=%v, want UNCONFIGURED and false", r.State, *r.Factors.BodyParseable)
	}
	if *r.Factors.HeaderBodyMemoEqual {
		t.Error("memo equality true with no body leg")
	}
}

func TestCheckFactorsNullWhenNotRead(t *testing.T) {
	r := Check(url, with(func(c *challenge) { c.status = 500 }))
	if r.Factors.Reason == nil || *r.Factors.Reason != ReasonStatusNot402 || r.Factors.Status == nil || *r.Factors.Status != 500 {
		t.Fatalf("reason/status = %v/%v", r.Factors.Reason, r.Factors.Status)
	}
	if r.Factors.HeaderPresent != nil || r.Factors.MemoPresent != nil || r.Factors.DescriptionOverlong != nil {
		t.Error("factors of an unread leg are not null")
	}
	r = Check(url, capture.Capture{Outcome: capture.Timeout})
	if *r.Factors.Reason != ReasonTimeout || r.Factors.Status != nil {
		t.Errorf("timeout: reason %s status %v", *r.Factors.Reason, r.Factors.Status)
	}
}

func TestDescriptionEdge(t *testing.T) {
	for n, want := range map[int]bool{500: false, 501: true} {
		r := Check(url, with(func(c *challenge) { c.body["description"] = strings.Repeat("語", n) }))
		if *r.Factors.DescriptionOverlong != want {
			t.Errorf("%d code points: overlong = %v", n, !want)
		}
	}
}

func TestHeaderBase64Forms(t *testing.T) {
	obj := `{"accepts":[{"amount":"1"}]}`
	std := base64.StdEncoding.EncodeToString([]byte(obj))
	tests := map[string]bool{
		std:                         true,
		strings.TrimRight(std, "="): true,
		"  " + std + "\r\n":         true,
		std[:8] + "\n" + std[8:]:    false,
		base64.URLEncoding.EncodeToString([]byte(`{"a":"~~~???"}`)): false,
		"":     false,
		"!!!!": false,
		// R4: base64 of any JSON value is decoded; only an object carries fields.
		base64.StdEncoding.EncodeToString([]byte(`"str"`)): true,
		base64.StdEncoding.EncodeToString([]byte(`null`)):  true,
		base64.StdEncoding.EncodeToString([]byte(`[}`)):    false,
	}
	for v, want := range tests {
		h := capture.Header{"Payment-Required": {v}}
		r := Check(url, capture.Capture{Outcome: capture.OK, Status: 402, Header: h, Body: []byte(`{}`)})
		if got := *r.Factors.HeaderDecodable; got != want {
			t.Errorf("%q decodable = %v, want %v", v, got, want)
		}
	}
}

func memoCap(bodyMemo, headerMemo string) capture.Capture {
	return with(func(c *challenge) {
		extra(c.body)["memo"] = bodyMemo
		extra(c.header)["memo"] = headerMemo
	})
}

// topLevelMemoCap is a 402 whose body has empty accepts and a top-level memo,
// and whose header carries the same memo (R5: the fallback needs no accepts[0]).
func topLevelMemoCap(memo string) capture.Capture {
	hdr := base64.StdEncoding.EncodeToString([]byte(`{"accepts":[{"extra":{"memo":"` + memo + `"}}]}`))
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{"Payment-Required": {hdr}},
		Body: []byte(`{"accepts":[],"memo":"` + memo + `"}`)}
}

func TestMemoStates(t *testing.T) {
	tests := []struct {
		name       string
		a, b       capture.Capture
		want       State
		wantReason string
	}{
		{"fresh unique leg-consistent", memoCap("pv-aaaaaaaa", "pv-aaaaaaaa"), memoCap("pv-bbbbbbbb", "pv-bbbbbbbb"), Bound, ""},
		{"second fetch failed", memoCap("pv-aaaaaaaa", "pv-aaaaaaaa"), capture.Capture{Outcome: capture.Failed}, NotA402, ""},
		{"top-level body memos with empty accepts bind (R5)", topLevelMemoCap("pv-aaaaaaaa"), topLevelMemoCap("pv-bbbbbbbb"), Bound, ""},
		{"first fetch 200", with(func(c *challenge) { c.status = 200 }), memoCap("x", "x"), NotA402, ""},
		{"no body memo in either", memoCap("", ""), memoCap("", ""), MemoAbsent, ""},
		{"no body memo but header memo", memoCap("", "pv-aaaaaaaa"), memoCap("", "pv-bbbbbbbb"), MemoAbsent, ""},
		{"legs differ", memoCap("pv-aaaaaaaa", "pv-cccccccc"), memoCap("pv-bbbbbbbb", "pv-bbbbbbbb"), LegMismatch, ""},
		{"header leg lacks memo", memoCap("pv-aaaaaaaa", ""), memoCap("pv-bbbbbbbb", "pv-bbbbbbbb"), LegMismatch, ""},
		{"reused", memoCap("pv-aaaaaaaa", "pv-aaaaaaaa"), memoCap("pv-aaaaaaaa", "pv-aaaaaaaa"), MemoReused, ""},
		{"leg mismatch wins over reuse", memoCap("pv-aaaaaaaa", "x"), memoCap("pv-aaaaaaaa", "pv-aaaaaaaa"), LegMismatch, ""},
		{"memo in one fetch only", memoCap("pv-aaaaaaaa", "pv-aaaaaaaa"), memoCap("", ""), MemoAbsent, ReasonMemoAbsentOneFetch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Memo(tt.a, tt.b)
			reason := ""
			if r.Reason != nil {
				reason = *r.Reason
			}
			if r.State != tt.want || reason != tt.wantReason {
				t.Errorf("got %s (%q), want %s (%q)", r.State, reason, tt.want, tt.wantReason)
			}
		})
	}
}

func TestMemoFormat(t *testing.T) {
	tests := map[string]string{
		"":            FormatAbsent,
		"pv-abcd":     FormatShort,
		"pv-abcde":    FormatPrefixedOpaque,
		"p-abcdefg":   FormatOpaque,
		"pv_abc_de":   FormatPrefixedOpaque,
		"1v-abcdefg":  FormatOpaque,
		"abcdefghij":  FormatOpaque,
		"pv-abcdé":    FormatOpaque,
		"日本語日本語日":     FormatShort,
		"pv-":         FormatShort,
		"pvabcdefgh-": FormatOpaque,
		"pv--------":  FormatPrefixedOpaque,
	}
	for memo, want := range tests {
		if got := MemoFormat(memo); got != want {
			t.Errorf("MemoFormat(%q) = %s, want %s", memo, got, want)
		}
	}
}

func TestMemoNeverCarriesMemoValues(t *testing.T) {
	r := Memo(memoCap("pv-secret-one", "pv-secret-one"), memoCap("pv-secret-two", "pv-secret-two"))
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "secret") {
		t.Errorf("memo value in result: %s", b)
	}
}

func resp(status int, body string) capture.Capture {
	return capture.Capture{Outcome: capture.OK, Status: status, Body: []byte(body)}
}

func TestGradeRules(t *testing.T) {
	tests := []struct {
		name   string
		c      capture.Capture
		grade  Grade
		reason string
	}{
		{"failed", capture.Capture{Outcome: capture.Failed}, Ungraded, ReasonProbeFailed},
		{"timeout", capture.Capture{Outcome: capture.Timeout}, Ungraded, ReasonProbeFailed},
		{"over cap", capture.Capture{Outcome: capture.OverCap, Status: 402}, Ungraded, ReasonProbeFailed},
		{"200", resp(200, ""), PresentFailDirty, ReasonFailOpen2xx},
		{"204 with reason body", resp(204, `{"error":"x"}`), PresentFailDirty, ReasonFailOpen2xx},
		{"402 with error", resp(402, `{"error":"invalid_payment"}`), PresentFailClosed, ReasonRejectedWithReason},
		{"402 with detail only", resp(402, `{"detail":"no"}`), PresentFailClosed, ReasonRejectedWithReason},
		{"402 plain challenge", resp(402, `{"x402Version":1,"accepts":[]}`), Absent, ReasonPaymentNeverEvaluated},
		{"402 empty error", resp(402, `{"error":"","reason":""}`), Absent, ReasonPaymentNeverEvaluated},
		{"402 non-string error", resp(402, `{"error":{"code":1}}`), Absent, ReasonPaymentNeverEvaluated},
		{"402 JSON array", resp(402, `["error"]`), Absent, ReasonPaymentNeverEvaluated},
		{"402 HTML", resp(402, `<html>pay</html>`), PresentFailDirty, ReasonDirtyRejection},
		{"402 empty body", resp(402, ``), PresentFailDirty, ReasonDirtyRejection},
		{"500 with reason", resp(500, `{"error":"boom"}`), PresentFailDirty, ReasonDirtyRejection},
		{"400", resp(400, `{"error":"bad"}`), PresentFailDirty, ReasonDirtyRejection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := GradeProbe(tt.c)
			if g.Grade != tt.grade || g.Reason != tt.reason {
				t.Errorf("got %s/%s, want %s/%s", g.Grade, g.Reason, tt.grade, tt.reason)
			}
			if g.FailOpen != (tt.reason == ReasonFailOpen2xx) {
				t.Errorf("fail_open = %v", g.FailOpen)
			}
		})
	}
}

func TestProbeNotProbed(t *testing.T) {
	r := Probe([]capture.Capture{{Outcome: capture.Timeout}})
	if r.Outcome != NotProbed {
		t.Fatalf("outcome %s", r.Outcome)
	}
	for _, g := range []RailGrade{r.Grades.Direct, r.Grades.Facilitator, r.Grades.MissingMemo, r.Grades.Bogus} {
		if g.Grade != Ungraded || g.Reason != ReasonBaselineFailed || g.Status != nil {
			t.Errorf("grade %+v", g)
		}
	}
	for _, p := range r.Probes[1:] {
		if p.Outcome != capture.NotSent || p.Status != nil {
			t.Errorf("probe %+v", p)
		}
	}
	if r.Methods.HEAD.Status != nil || r.Methods.POST.Gated != nil || len(r.Exposures) != 0 {
		t.Errorf("matrix %+v exposures %v", r.Methods, r.Exposures)
	}
}

func TestProbeExposuresInOrder(t *testing.T) {
	caps := []capture.Capture{
		resp(402, `{}`), resp(200, ``), resp(201, `{}`),
		resp(200, `{}`), resp(402, `{"error":"x"}`), resp(200, `{}`), resp(500, `{}`),
	}
	r := Probe(caps)
	got := strings.Join(r.Exposures, ",")
	want := "METHOD-UNPAID-2XX:HEAD,METHOD-UNPAID-2XX:POST,FAIL-OPEN:direct,FAIL-OPEN:missing_memo"
	if got != want {
		t.Errorf("exposures = %s, want %s", got, want)
	}
	if r.Grades.Facilitator.Grade != PresentFailClosed || r.Grades.Bogus.Grade != PresentFailDirty {
		t.Errorf("grades %+v", r.Grades)
	}
}

// R18: only the first PAYMENT-REQUIRED value is read.
func TestOnlyTheFirstHeaderValueIsRead(t *testing.T) {
	good := fleet().capture()
	value := good.Header["Payment-Required"][0]
	for _, tt := range []struct {
		values []string
		want   bool
	}{{[]string{value, "garbage"}, true}, {[]string{"garbage", value}, false}} {
		c := fleet().capture()
		c.Header = capture.Header{"Payment-Required": tt.values}
		if got := *Check(url, c).Factors.HeaderDecodable; got != tt.want {
			t.Errorf("%v: decodable = %v, want %v", tt.values[0][:7], got, tt.want)
		}
	}
}

// The hand-written matcher is the criteria's regular expression.
func TestPrefixedOpaqueIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]+$`)
	for _, s := range []string{"", "a", "a-", "-a", "a-b", "ab-c", "a_b-c", "a--", "a-_", "1a-b", "ab", "ab-", "Ab9_x", "a-b!", "é-b", "a-é", "a b-c", "pv-7f3a9c2e41d84b6f", "pv_", "a-b\n"} {
		if got, want := matchesPrefixedOpaque(s), re.MatchString(s); got != want {
			t.Errorf("%q: matcher %v, regexp %v", s, got, want)
		}
	}
}

func FuzzPrefixedOpaque(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]+$`)
	f.Add("pv-7f3a9c2e41d84b6f")
	f.Add("a-")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := matchesPrefixedOpaque(s), re.MatchString(s); got != want {
			t.Fatalf("%q: matcher %v, regexp %v", s, got, want)
		}
	})
}
