package report

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/sign-golden.json from the current Sign")

// goldenDocs are documents of every kind the service signs (check, memo and
// probe reports, a pre-check answer) and documents with odd strings and
// numbers. The golden file holds what Sign produced for them before the
// canonical form was rebuilt without generic maps; Sign must still produce
// exactly those bytes.
func goldenDocs() map[string]any {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	env := func(op, svc string) map[string]any {
		return map[string]any{
			"service": svc, "version": "1.0.0", "criteria_id": "payability/v1", "criteria_revision": "1.0.0",
			"corpus": map[string]any{"id": "payability-corpus/v1", "sha256": strings.Repeat("ab", 32)},
			"op":     op, "url": "https://api.example.com/paid?x=1&y=<2>", "checked_at": "2026-11-29T15:04:05.123Z",
			"verdict_line":        "CHALLENGE PAYABILITY VERDICT — state: POPULATED — 2026-11-29T15:04:05.123Z",
			"disclosure_sentence": "Submitting an endpoint URL to any third party… discloses that you are checking it.",
			"honesty_line":        "The verdict grades the challenge exactly as served at check time — it is not a guarantee.",
			"retention":           "Target challenges are processed in memory only and are never stored.",
		}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	payment := map[string]any{"rail": "direct", "tx": "5h2Xy9", "payer": "Payer1111111111111111111111111111111111111", "fee_lamports": "5000",
		"price": map[string]any{"usdc_units": 10000, "cad": map[string]any{"rate": "1.3912", "rate_date": "2026-11-28", "cad_pending": false}}}
	return map[string]any{
		"check": with(env("check", "payability-verdict"), "state", "POPULATED", "payment", payment, "factors", map[string]any{
			"header_present": true, "header_decodable": true, "body_parseable": true, "recipient_present": true,
			"token_account_present": true, "memo_present": true, "amounts_present": true, "amounts_consistent": true,
			"resource_present": true, "resource_equals_called_url": true, "header_body_memo_equal": true,
			"header_body_amount_equal": nil, "header_body_pay_to_equal": true, "description_overlong": false,
			"reason": nil, "status": 402,
		}),
		"memo": with(env("memo", "payability-verdict"), "state", "BOUND", "reason", nil, "payment", payment,
			"fetch1", map[string]any{"fetch_ok": true, "status": 402, "is_402": true, "body_over_cap": false},
			"fetch2", map[string]any{"fetch_ok": true, "status": 402, "is_402": true, "body_over_cap": false},
			"correlation_census", map[string]any{
				"fetch1": map[string]any{"body": []any{"amount", "extra", "memo", "payTo"}, "header": []any{}},
				"fetch2": map[string]any{"body": []any{"amount", "extra", "memo", "payTo"}, "header": nil},
			}),
		"probe": with(env("probe", "rail-probe"), "outcome", "PROBED", "payment", payment,
			"grades", map[string]any{
				"direct":      map[string]any{"grade": "PRESENT-FAIL-CLOSED", "reason": "rejected_with_reason", "status": 402, "fail_open": false},
				"facilitator": map[string]any{"grade": "ABSENT", "reason": "payment_never_evaluated", "status": 402, "fail_open": false},
			},
			"probes", []any{map[string]any{"id": "baseline_get", "method": "GET", "status": 402, "outcome": "ok"}, map[string]any{"id": "head", "method": "HEAD", "status": nil, "outcome": "timeout"}},
			"methods", map[string]any{"GET": map[string]any{"status": 402, "gated": true, "unpaid_2xx": false}},
			"exposures", []any{"FAIL-OPEN:direct", "METHOD-UNPAID-2XX:HEAD"},
			"no_funds_property", "NO-FUNDS PROPERTY: no probe this service sends can move funds, ever."),
		"precheck": with(env("check", "payability-verdict"), "in_policy", false, "refusal", map[string]any{"rule": "url_userinfo", "max_bytes": 2048}),
		"odd strings": map[string]any{
			"html":       "<script>&amp;</script>",
			"controls":   "\x00\x01\b\f\n\r\t\x1f\x7f",
			"quotes":     `"\/\\`,
			"separators": "line\u2028para\u2029",
			"bmp":        "é€\uffff\ue000",
			"astral":     "😀𝄞",
			"invalid":    "a\xffb", // json.Marshal writes U+FFFD
			"€":          1, "😀": 2, "\ue000": 3, "a": 4, "A": 5, "": 6, "aa": 7, "\u0080": 8,
			"raw escapes": raw(`"\u00e9\ud83d\ude00\u2028\u0041\/\u001F"`),
		},
		"odd numbers": map[string]any{
			"zero": 0, "minus zero": raw(`-0`), "max": MaxSafeInteger, "min": -MaxSafeInteger,
			"one point zero": raw(`1.0`), "exponent": raw(`1e2`), "big exponent": raw(`9.007199254740991E15`),
			"fifteen digits": raw(`999999999999999`), "sixteen digits": raw(`1000000000000000`),
			"nested": []any{raw(`[0,-0,1E0,[[]],{}]`)},
		},
	}
}

func TestSignGolden(t *testing.T) {
	key := seededKey(t, 7)
	path := filepath.Join("testdata", "sign-golden.json")
	got := map[string]string{}
	for name, doc := range goldenDocs() {
		b, err := Sign(doc, key)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = string(b)
	}
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("golden has %d documents, want %d", len(want), len(got))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: Sign =\n%s\nwant\n%s", name, got[name], w)
		}
		if _, err := Verify([]byte(w), NewKeySet(key)); err != nil {
			t.Errorf("%s: the golden document does not verify: %v", name, err)
		}
	}
}
