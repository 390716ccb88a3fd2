package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every POST body is JSON, sent as such: a cross-site form (text/plain,
// application/x-www-form-urlencoded, multipart/form-data) cannot spend a
// visitor's free allowance or present a payment.
func TestPostBodyMustBeApplicationJSON(t *testing.T) {
	h := newHarness(t, ServeAll)
	body := `{"url":"https://seller.example/"}`
	for _, path := range []string{"/toll/payability/precheck", "/toll/payability/check", "/toll/rail-probe/probe"} {
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/json-patch+json", "text/json"} {
			res := h.do(http.MethodPost, path, body, map[string]string{"Content-Type": ct})
			if res.status != http.StatusUnsupportedMediaType || !bytes.Contains(res.body, []byte(`"content_type_unsupported"`)) {
				t.Errorf("%s with Content-Type %q: %d %s, want 415", path, ct, res.status, res.body)
			}
		}
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
			if res := h.do(http.MethodPost, path, body, map[string]string{"Content-Type": ct}); res.status == http.StatusUnsupportedMediaType {
				t.Errorf("%s with Content-Type %q: 415", path, ct)
			}
		}
	}
	// The refused ones counted nothing: one row, of the first accepted
	// pre-check (the next two were within 5,000 ms of it).
	if n := rows(t, h, "free_use"); n != 1 {
		t.Errorf("%d free-tier rows, want 1", n)
	}
}

// A proxy in front and we must read the same URL out of one body: repeated
// names, names that differ only in case, invalid UTF-8 and trailing data
// are refused, free.
func TestRequestBodyDecodedStrictly(t *testing.T) {
	h := newHarness(t, ServeAll)
	for name, body := range map[string]string{
		"duplicate url":            `{"url":"https://a.example/","url":"https://b.example/"}`,
		"case variant URL":         `{"URL":"https://a.example/"}`,
		"case variant Url beside":  `{"url":"https://a.example/","Url":"https://b.example/"}`,
		"duplicate op":             `{"url":"https://a.example/","op":"check","op":"memo"}`,
		"case variant Caller":      `{"url":"https://a.example/","Caller":"x"}`,
		"unknown field":            `{"url":"https://a.example/","extra":1}`,
		"invalid UTF-8":            "{\"url\":\"https://a.example/\xff\"}",
		"two objects":              `{"url":"https://a.example/"}{"url":"https://b.example/"}`,
		"trailing garbage":         `{"url":"https://a.example/"} x`,
		"array":                    `[{"url":"https://a.example/"}]`,
		"string":                   `"https://a.example/"`,
		"url not a string":         `{"url":{"url":"https://a.example/"}}`,
		"nested duplicate in junk": `{"url":"https://a.example/","op":{"a":1,"a":2}}`,
		"empty":                    ``,
		// An escape of half a surrogate pair is no character (RFC 8259
		// §8.2): encoding/json reads U+FFFD, a JavaScript proxy the lone
		// half, so the two would read different URLs.
		"lone high surrogate":         `{"url":"https://a.example/\ud800"}`,
		"lone low surrogate":          `{"url":"https://a.example/\udc00x"}`,
		"high surrogate, not low":     `{"url":"https://a.example/\ud800\u0041"}`,
		"lone surrogate in nested op": `{"url":"https://a.example/","op":{"a":"\uDFFF"}}`,
	} {
		for _, path := range []string{"/toll/payability/precheck", "/toll/payability/check"} {
			res := h.do(http.MethodPost, path, body, map[string]string{"Content-Type": "application/json"})
			if res.status != http.StatusBadRequest || !bytes.Contains(res.body, []byte(`"request_malformed"`)) {
				t.Errorf("%s to %s: %d %s, want 400 request_malformed", name, path, res.status, res.body)
			}
		}
	}
	if n := rows(t, h, "free_use"); n != 0 {
		t.Errorf("%d free-tier rows after malformed bodies, want 0", n)
	}
}

func TestDecodeStrictAccepts(t *testing.T) {
	var v precheckRequest
	if err := decodeStrict([]byte(` {"op":"memo", "url":"https://a.example/\u00e9"} `+"\n"), &v); err != nil || v.URL == nil || *v.URL != "https://a.example/é" || v.Op != "memo" {
		t.Errorf("decodeStrict = %v, %+v", err, v)
	}
	// A surrogate pair is one character; an escaped backslash before "u" is
	// no escape.
	v = precheckRequest{}
	if err := decodeStrict([]byte(`{"url":"https://a.example/\ud83d\ude00\\ud800"}`), &v); err != nil || v.URL == nil || *v.URL != "https://a.example/😀\\ud800" {
		t.Errorf("decodeStrict = %v, %+v", err, v)
	}
}

// A body far over the cap (10 MiB, sent whole by a real client) gets the
// same 413 naming the cap as one a byte over, not a connection reset.
func TestBodyFarOverCapIsAnswered413(t *testing.T) {
	h := newHarness(t, ServeAll)
	for _, path := range []string{"/toll/payability/precheck", "/toll/payability/check"} {
		for _, size := range []int{RequestBodyCap + 1, 10 << 20} {
			body := `{"url":"https://a.example/","caller":"` + strings.Repeat("a", size-40) + `"}`
			req, _ := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s, %d bytes: %v, want an answer", path, len(body), err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(b, []byte("262,144 bytes")) || !bytes.Contains(b, []byte(`"request_body_over_cap"`)) {
				t.Errorf("%s, %d bytes: %d %s, want 413 naming the cap", path, len(body), res.StatusCode, b)
			}

			// A client that writes the whole request before it reads
			// (as curl --data-binary does): a server that stopped
			// reading would reset the connection under it.
			conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, len(body))
			if _, err := io.WriteString(conn, body); err != nil {
				t.Fatalf("%s, %d bytes written whole: %v", path, len(body), err)
			}
			raw, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("%s, %d bytes written whole: reading the answer: %v", path, len(body), err)
			}
			b, _ = io.ReadAll(raw.Body)
			conn.Close()
			if raw.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(b, []byte("262,144 bytes")) {
				t.Errorf("%s, %d bytes written whole: %d %s, want 413 naming the cap", path, len(body), raw.StatusCode, b)
			}
		}
	}
}

// The ceiling per source: all callers from one address together get at
// most FreePerSource free pre-checks a UTC day; the next, from a fresh
// wallet, is the criteria's 402 with the paid challenge. Another address is
// unaffected.
func TestFreeCeilingPerSource(t *testing.T) {
	h := newHarness(t, ServeAll)
	h.s.cfg.FreePerSource = 3
	call := func(wallet, remote string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/toll/payability/precheck",
			strings.NewReader(fmt.Sprintf(`{"url":"https://seller.example/","caller":%q}`, testWallet(wallet))))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		h.s.ServeHTTP(rec, req)
		return rec
	}
	for i := range 3 {
		if rec := call(fmt.Sprintf("w%d", i), "198.51.100.7:1000"); rec.Code != http.StatusOK {
			t.Fatalf("call %d from one address: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	rec := call("w-fresh", "198.51.100.7:2000")
	if rec.Code != http.StatusPaymentRequired || !strings.Contains(rec.Body.String(), `"free_source_limit"`) || rec.Header().Get("PAYMENT-REQUIRED") == "" {
		t.Errorf("call 4 from the address, a fresh wallet: %d %s, want 402 free_source_limit with the challenge", rec.Code, rec.Body)
	}
	// IPv6: the /64 is one source.
	for i := range 3 {
		call(fmt.Sprintf("v6-%d", i), fmt.Sprintf("[2001:db8:5:6::%d]:1000", i+1))
	}
	if rec := call("v6-fresh", "[2001:db8:5:6:ffff::9]:1000"); rec.Code != http.StatusPaymentRequired {
		t.Errorf("call 4 from the /64: %d, want 402", rec.Code)
	}
	if rec := call("w-fresh", "198.51.100.8:1000"); rec.Code != http.StatusOK {
		t.Errorf("the refused wallet from another address: %d %s, want 200 (its refused call did not count)", rec.Code, rec.Body)
	}
}

// Without --allow-private-targets, a pre-check of a literal loopback or
// private URL says the fetch would be refused, naming the rule, takes no
// free call, and offers no challenge.
func TestPrecheckNamesAPrivateLiteral(t *testing.T) {
	h := newHarness(t, ServeAll)
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://[::1]/", "http://10.1.2.3/", "http://localhost:3000/", "http://api.localhost/", "http://169.254.169.254/latest", "http://[fd00::1]/", "http://[::ffff:192.168.0.1]/",
		// The IPv4 forms a browser and getaddrinfo read as addresses
		// (WHATWG URL §4.4, inet_aton): hex, octal, one number, short forms.
		"http://0x7f000001/", "http://0x7F.0.0.1/", "http://0177.0.0.1/", "http://2130706433/", "http://127.1/", "http://10.1/", "http://0/", "http://127.0.0.1./"} {
		for range 2 { // twice at once: no allowance is spent, so no 402
			res := h.do(http.MethodPost, "/toll/payability/precheck", fmt.Sprintf(`{"url":%q}`, u), nil)
			if res.status != http.StatusOK || !bytes.Contains(res.body, []byte(`"in_policy":false`)) ||
				!bytes.Contains(res.body, []byte(`"rule":"address_refused"`)) || res.header.Get("PAYMENT-REQUIRED") != "" ||
				bytes.Contains(res.body, []byte(`"free_calls_used_today"`)) {
				t.Errorf("%s: %d %s, want 200 in_policy false, rule address_refused, no count, no challenge", u, res.status, res.body)
			}
		}
	}
	if n := rows(t, h, "free_use"); n != 0 {
		t.Errorf("%d free-tier rows, want 0", n)
	}
	// A public literal and a name are in policy (names are checked when fetched).
	for _, u := range []string{"http://8.8.8.8/", "https://seller.example/", "http://0x8.8.8.8/", "http://134744072/", "http://1.2.3.4.example/", "http://0x7f000001.example/", "http://4294967296/"} {
		h.clock.Add(10e9)
		if res := h.do(http.MethodPost, "/toll/payability/precheck", fmt.Sprintf(`{"url":%q}`, u), nil); res.status != http.StatusOK || !bytes.Contains(res.body, []byte(`"in_policy":true`)) {
			t.Errorf("%s: %d %s, want in policy", u, res.status, res.body)
		}
	}
	h.s.cfg.AllowPrivate = true
	h.clock.Add(10e9)
	if res := h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"http://127.0.0.1:8080/x"}`, nil); !bytes.Contains(res.body, []byte(`"in_policy":true`)) {
		t.Errorf("with private targets allowed: %d %s, want in policy", res.status, res.body)
	}
}
