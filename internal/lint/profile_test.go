package lint

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// profileDoc is a clean v2 challenge for url on Base, with a bazaar
// extension whose info validates against its schema.
func profileDoc(url string) map[string]any {
	var d map[string]any
	json.Unmarshal([]byte(`{"x402Version":2,"resource":{"url":"`+url+`"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}],`+
		`"extensions":{"bazaar":{"info":{"input":{"type":"http","method":"GET"}},"schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"input":{"type":"object","properties":{"type":{"const":"http"},"method":{"enum":["GET"]}},"required":["type","method"]}},"required":["input"]}}}}`), &d)
	return d
}

func profileCapture(d map[string]any, v1Body string) capture.Capture {
	h := capture.Header{"Cache-Control": {"no-store"}}
	if d != nil {
		b, _ := json.Marshal(d)
		h["Payment-Required"] = []string{base64.StdEncoding.EncodeToString(b)}
	}
	body := "{}"
	if v1Body != "" {
		body = v1Body
	}
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: h, Body: []byte(body)}
}

// TestProfiles: one row per clause of each profile rule; a compliant
// resource gets nothing, and the x402-lint result is never changed.
func TestProfiles(t *testing.T) {
	const https = "https://seller.example/api"
	mut := func(url string, f func(d map[string]any)) capture.Capture {
		d := profileDoc(url)
		f(d)
		return profileCapture(d, "")
	}
	bz := func(d map[string]any) map[string]any {
		return d["extensions"].(map[string]any)["bazaar"].(map[string]any)
	}
	v1 := `{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","resource":"https://seller.example/api","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}`
	for _, tc := range []struct {
		name, profile, url string
		c                  capture.Capture
		want               string
	}{
		{"x402scan compliant", "x402scan", https, profileCapture(profileDoc(https), ""), ""},
		{"x402scan http", "x402scan", "http://seller.example/api", profileCapture(profileDoc("http://seller.example/api"), ""), "x402scan_https_required@http:url"},
		{"x402scan http on localhost", "x402scan", "http://localhost:8080/api", profileCapture(profileDoc("http://localhost:8080/api"), ""), ""},
		{"x402scan http on 127.0.0.1", "x402scan", "http://127.0.0.1/api", profileCapture(profileDoc("http://127.0.0.1/api"), ""), ""},
		{"x402scan no input schema", "x402scan", https, mut(https, func(d map[string]any) { delete(d, "extensions") }), "x402scan_input_schema_missing@header:extensions.bazaar.info.input"},
		{"x402scan input not an object", "x402scan", https, mut(https, func(d map[string]any) { bz(d)["info"] = map[string]any{"input": "GET"} }), "x402scan_input_schema_missing@header:extensions.bazaar.info.input"},
		{"x402scan v1 only", "x402scan", https, profileCapture(nil, v1), "x402scan_v2_required@http:PAYMENT-REQUIRED"},
		{"x402scan unsupported network", "x402scan", https, mut(https, func(d map[string]any) {
			d["accepts"].([]any)[0].(map[string]any)["network"] = "eip155:137"
		}), "x402scan_network_unsupported@header:accepts"},
		{"x402scan solana mainnet", "x402scan", https, mut(https, func(d map[string]any) {
			d["accepts"].([]any)[0].(map[string]any)["network"] = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
		}), ""},
		{"x402scan not 402", "x402scan", "http://seller.example/api", capture.Capture{Outcome: capture.OK, Status: 200}, ""},
		{"bazaar compliant", "bazaar", https, profileCapture(profileDoc(https), ""), ""},
		{"bazaar http is fine", "bazaar", "http://seller.example/api", profileCapture(profileDoc("http://seller.example/api"), ""), ""},
		{"bazaar no extension", "bazaar", https, mut(https, func(d map[string]any) { delete(d, "extensions") }), "bazaar_extension_missing@header:extensions.bazaar"},
		{"bazaar no schema", "bazaar", https, mut(https, func(d map[string]any) { delete(bz(d), "schema") }), "bazaar_extension_missing@header:extensions.bazaar"},
		{"bazaar v1 only", "bazaar", https, profileCapture(nil, v1), "bazaar_extension_missing@body:extensions.bazaar"},
		{"bazaar input without method", "bazaar", https, mut(https, func(d map[string]any) {
			bz(d)["info"] = map[string]any{"input": map[string]any{"type": "http"}}
			bz(d)["schema"] = map[string]any{"type": "object"}
		}), "bazaar_input_invalid@header:extensions.bazaar.info.input"},
		{"bazaar mcp input", "bazaar", https, mut(https, func(d map[string]any) {
			bz(d)["info"] = map[string]any{"input": map[string]any{"type": "mcp", "toolName": "t"}}
			bz(d)["schema"] = map[string]any{"type": "object"}
		}), ""},
		{"bazaar info rejected", "bazaar", https, mut(https, func(d map[string]any) {
			bz(d)["info"] = map[string]any{"input": map[string]any{"type": "http", "method": "POST"}}
		}), "bazaar_info_rejected@header:extensions.bazaar.info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{URL: tc.url, Method: "GET", Capture: tc.c, Now: time.Unix(0, 0)}
			res := Lint(in)
			before, _ := json.Marshal(res)
			fs, ok := GradeProfile(tc.profile, in, res)
			if !ok {
				t.Fatal("unknown profile")
			}
			var got []string
			for _, f := range fs {
				got = append(got, f.Rule+"@"+string(f.Leg)+":"+f.Field)
				if f.Message == "" || f.Severity != Error {
					t.Errorf("finding %+v", f)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if after, _ := json.Marshal(res); string(after) != string(before) {
				t.Error("the profile changed the x402-lint result")
			}
		})
	}
	if _, ok := GradeProfile("nope", Input{}, Result{}); ok {
		t.Error("unknown profile accepted")
	}
}

// TestProfilesDocument: every profile rule has a message, a severity, a
// dated source, and an id no x402-lint rule has.
func TestProfilesDocument(t *testing.T) {
	d := Profiles()
	if d.ID != ProfilesID || d.Revision == "" || len(d.Profiles) != 2 {
		t.Fatalf("document %+v", d)
	}
	n := 0
	for _, p := range d.Profiles {
		if p.Read == "" || p.Directory == "" {
			t.Errorf("profile %s lacks its read date or directory", p.Name)
		}
		for _, r := range p.Rules {
			n++
			if profileMessages[r.ID] == "" || r.Checks == "" || len(r.Source) == 0 || (r.Severity != Error && r.Severity != Warn && r.Severity != Info) {
				t.Errorf("rule %+v", r)
			}
			if _, clash := RuleByID(r.ID); clash {
				t.Errorf("%s is an x402-lint rule id", r.ID)
			}
		}
	}
	if n != len(profileMessages) {
		t.Errorf("%d rules, %d messages", n, len(profileMessages))
	}
}
