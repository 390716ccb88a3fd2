package reliability

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

func TestResolveTerms(t *testing.T) {
	other := "0x1111111111111111111111111111111111111111"
	hdr := func(v string) capture.Header { return capture.Header{"Payment-Required": {v}} }
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	c := func(status int, h capture.Header, body []byte) capture.Capture {
		return capture.Capture{Outcome: capture.OK, Status: status, Header: h, Body: body}
	}
	want := Terms{ChainID: 8453, PayTo: payee, Asset: usdcOnBase}
	ch := func(field string, code Code) []Finding { return []Finding{{StageChallenge, field, code}} }
	tests := []struct {
		name    string
		c       capture.Capture
		want    Terms
		sources []string
		fs      []Finding
	}{
		{"v2 header and v1 body agree", challenge(), want, []string{"header", "body"}, nil},
		{"v2 header only (eip155:8453)", c(402, hdr(challengeHeader(payee, usdcOnBase)), []byte("{}")), want, []string{"header"}, nil},
		{"v1 body only (base)", c(402, nil, challengeBody(payee, usdcOnBase)), want, []string{"body"}, nil},
		{"legs agree up to case", c(402, hdr(challengeHeader(strings.ToLower(payee), "0x"+strings.ToUpper(usdcOnBase[2:]))), challengeBody(payee, usdcOnBase)),
			Terms{ChainID: 8453, PayTo: strings.ToLower(payee), Asset: "0x" + strings.ToUpper(usdcOnBase[2:])}, []string{"header", "body"}, nil},
		{"undecodable header, body read", c(402, hdr("not base64!"), challengeBody(payee, usdcOnBase)), want, []string{"body"}, nil},
		{"Base entry after a Solana one", c(402, nil, []byte(`{"accepts":[{"network":"solana","payTo":"Wallet111","asset":"Mint111"},{"network":"base","payTo":"`+payee+`","asset":"`+usdcOnBase+`"}]}`)),
			want, []string{"body"}, nil},
		{"legs disagree on payee", c(402, hdr(challengeHeader(other, usdcOnBase)), challengeBody(payee, usdcOnBase)), Terms{}, nil, ch(FieldPayTo, CodeAmbiguous)},
		{"legs disagree on asset", c(402, hdr(challengeHeader(payee, other)), challengeBody(payee, usdcOnBase)), Terms{}, nil, ch(FieldAsset, CodeAmbiguous)},
		{"two Base tokens", c(402, nil, []byte(`{"accepts":[{"network":"base","payTo":"`+payee+`","asset":"`+usdcOnBase+`"},{"network":"eip155:8453","payTo":"`+payee+`","asset":"`+other+`"}]}`)),
			Terms{}, nil, ch(FieldAsset, CodeAmbiguous)},
		{"payTo not an address", c(402, nil, challengeBody("Wallet111", usdcOnBase)), Terms{}, nil, ch(FieldPayTo, CodeNotAddress)},
		{"asset missing", c(402, nil, []byte(`{"accepts":[{"network":"base","payTo":"`+payee+`"}]}`)), Terms{}, nil, ch(FieldAsset, CodeNotAddress)},
		{"only base-sepolia", c(402, nil, []byte(`{"accepts":[{"network":"base-sepolia","payTo":"`+payee+`","asset":"`+usdcOnBase+`"}]}`)), Terms{}, nil, ch(FieldChallenge, CodeNoBaseAccepts)},
		{"network spelled Base", c(402, nil, []byte(`{"accepts":[{"network":"Base","payTo":"`+payee+`","asset":"`+usdcOnBase+`"}]}`)), Terms{}, nil, ch(FieldChallenge, CodeNoBaseAccepts)},
		{"eip155 of another chain", c(402, hdr(b64(`{"accepts":[{"network":"eip155:1","payTo":"`+payee+`","asset":"`+usdcOnBase+`"}]}`)), nil), Terms{}, nil, ch(FieldChallenge, CodeNoBaseAccepts)},
		{"accepts not an array", c(402, nil, []byte(`{"accepts":{"network":"base"}}`)), Terms{}, nil, ch(FieldChallenge, CodeNoBaseAccepts)},
		{"HTML 402", c(402, nil, []byte(`<html>pay</html>`)), Terms{}, nil, ch(FieldChallenge, CodeNoBaseAccepts)},
		{"200, no challenge", c(200, hdr(challengeHeader(payee, usdcOnBase)), challengeBody(payee, usdcOnBase)), Terms{}, nil, ch(FieldChallenge, CodeNot402)},
		{"redirect", c(302, nil, nil), Terms{}, nil, ch(FieldChallenge, CodeNot402)},
		{"timeout", capture.Capture{Outcome: capture.Timeout}, Terms{}, nil, ch(FieldChallenge, CodeTimeout)},
		{"over cap", capture.Capture{Outcome: capture.OverCap, Status: 402}, Terms{}, nil, ch(FieldChallenge, CodeOverCap)},
		{"failed", capture.Capture{Outcome: capture.Failed}, Terms{}, nil, ch(FieldChallenge, CodeFetchFailed)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fs := ResolveTerms(tt.c)
			tt.want.Sources = tt.sources
			if !reflect.DeepEqual(fs, tt.fs) {
				t.Fatalf("findings = %v, want %v", fs, tt.fs)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("terms = %+v, want %+v", got, tt.want)
			}
		})
	}
}
