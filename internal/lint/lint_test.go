package lint

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/jsonschema"
)

// The corpus (internal/corpus, lint-corpus.v1.json, written by the
// independent generator) is the main test of every rule on both legs and
// both families; these tests pin the parts the corpus cannot: the document
// and the code stay in step, the helpers' vectors, custody, and the shapes
// preflight relies on.

const called = "https://api.seller.example/v1/weather"

var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func entrySVM() map[string]any {
	return map[string]any{"scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "amount": "10000",
		"asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "payTo": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
		"maxTimeoutSeconds": json.Number("60"), "extra": map[string]any{"feePayer": "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"}}
}

func entryEVM() map[string]any {
	return map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "10000",
		"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		"maxTimeoutSeconds": json.Number("60"), "extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

func toV1(e map[string]any) map[string]any {
	o := map[string]any{}
	for k, v := range e {
		o[k] = v
	}
	o["maxAmountRequired"] = o["amount"]
	delete(o, "amount")
	if o["network"] == "eip155:8453" {
		o["network"] = "base"
	} else {
		o["network"] = "solana"
	}
	o["resource"] = called
	o["description"] = "weather"
	return o
}

func v2(entries ...map[string]any) map[string]any {
	acc := []any{}
	for _, e := range entries {
		acc = append(acc, e)
	}
	return map[string]any{"x402Version": 2, "resource": map[string]any{"url": called}, "accepts": acc}
}

func v1(entries ...map[string]any) map[string]any {
	acc := []any{}
	for _, e := range entries {
		acc = append(acc, toV1(e))
	}
	return map[string]any{"x402Version": 1, "accepts": acc}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resp builds a 402 with Cache-Control: no-store, an optional header leg and
// an optional body.
func resp(t *testing.T, header map[string]any, body any) capture.Capture {
	h := capture.Header{"Cache-Control": {"no-store"}}
	if header != nil {
		h["Payment-Required"] = []string{base64.StdEncoding.EncodeToString(mustJSON(t, header))}
	}
	b := []byte("{}")
	if body != nil {
		b = mustJSON(t, body)
	}
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: h, Body: b}
}

func rules(r Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Rule+"@"+string(f.Leg)+":"+f.Field)
	}
	return out
}

func TestDocumentAndCodeAgree(t *testing.T) {
	src, err := os.ReadFile("ids.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	for _, m := range regexp.MustCompile(`rule\w+\s+=\s+"([a-z0-9_]+)"`).FindAllStringSubmatch(string(src), -1) {
		consts[m[1]] = true
	}
	d := Rules()
	if d.ID != RulesID || d.Revision == "" || d.Corpus.ID != "x402-lint-corpus/v1" {
		t.Errorf("document header %q %q %q", d.ID, d.Revision, d.Corpus.ID)
	}
	for _, r := range d.Rules {
		if !consts[r.ID] {
			t.Errorf("rule %s has no constant in ids.go", r.ID)
		}
		if messages[r.ID] == "" {
			t.Errorf("rule %s has no message", r.ID)
		}
		if r.Checks == "" || len(r.Source) == 0 || r.Family == "" {
			t.Errorf("rule %s lacks checks, family or source", r.ID)
		}
		for _, s := range r.Source {
			if s.File == "" || s.Section == "" {
				t.Errorf("rule %s cites %+v", r.ID, s)
			}
		}
		delete(consts, r.ID)
	}
	for id := range consts {
		t.Errorf("constant %s is not a published rule", id)
	}
	if len(messages) != len(d.Rules) {
		t.Errorf("%d messages for %d rules", len(messages), len(d.Rules))
	}
}

// TestEveryRuleIsExercisedByTheCorpus: each published rule appears in the
// expected findings of at least one corpus case.
func TestEveryRuleIsExercisedByTheCorpus(t *testing.T) {
	raw, err := os.ReadFile("../corpus/lint-corpus.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules().Rules {
		if !strings.Contains(string(raw), `"rule": "`+r.ID+`"`) {
			t.Errorf("no corpus case expects %s", r.ID)
		}
	}
}

func TestRulesWithPin(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	b, err := RulesWithPin(pin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"sha256": "`+pin+`"`) || len(b) != len(RulesRaw())+64 {
		t.Errorf("pin not substituted in place")
	}
	if _, err := RulesWithPin("nothex"); err == nil {
		t.Error("a bad pin was accepted")
	}
}

func TestNetworkCAIP2(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"base", "eip155:8453", true},
		{"base-sepolia", "eip155:84532", true},
		{"solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", true},
		{"solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", true},
		{"polygon-amoy", "eip155:80002", true},
		// The v1 client (x402's legacy package, types/shared/network.ts)
		// names these too; a v1 seller on them is payable.
		{"abstract", "eip155:2741", true},
		{"abstract-testnet", "eip155:11124", true},
		{"story", "eip155:1514", true},
		{"educhain", "eip155:41923", true},
		{"skale-base-sepolia", "eip155:324705682", true},
		{"iotex-testnet", "", false},
		{"eip155:8453", "", false},
		{"Base", "", false},
		{"", "", false},
	} {
		got, ok := NetworkCAIP2(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NetworkCAIP2(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestEIP55 uses the test vectors of EIP-55 (all caps, all lower, mixed).
func TestEIP55(t *testing.T) {
	vectors := []string{
		"0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	}
	for _, v := range vectors {
		if !EIP55Valid(v) {
			t.Errorf("%s: vector fails", v)
		}
		if strings.ToLower(v) != v && strings.ToUpper(v[2:]) != v[2:] && EIP55(strings.ToLower(v)) != v {
			t.Errorf("EIP55(%s) = %s", strings.ToLower(v), EIP55(strings.ToLower(v)))
		}
	}
	for _, bad := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", // last letter's case flipped
		"0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",  // 39 hex
		"5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedaa", // no 0x
		"0xZaAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
	} {
		if EIP55Valid(bad) {
			t.Errorf("%s passes", bad)
		}
	}
}

func TestSolanaAddress(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", true},
		{"11111111111111111111111111111111", true},
		{"1111111111111111111111111111111", false},  // 31 bytes
		{"0OIl1111111111111111111111111111", false}, // not base58
		{"", false},
	} {
		if got := SolanaAddress(tc.s); got != tc.ok {
			t.Errorf("SolanaAddress(%q) = %v", tc.s, got)
		}
	}
}

// TestRuleClauses: one row per clause the corpus states only indirectly,
// on both legs and both families.
func TestRuleClauses(t *testing.T) {
	type row struct {
		name string
		c    func(t *testing.T) capture.Capture
		url  string
		want []string
	}
	mut := func(e map[string]any, f func(map[string]any)) map[string]any { f(e); return e }
	rows := []row{
		{"header-only v2 Solana is fully valid", func(t *testing.T) capture.Capture { return resp(t, v2(entrySVM()), nil) }, called, nil},
		{"header-only v2 EVM is fully valid", func(t *testing.T) capture.Capture { return resp(t, v2(entryEVM()), nil) }, called, nil},
		{"v1-only Solana is fully valid", func(t *testing.T) capture.Capture { return resp(t, nil, v1(entrySVM())) }, called, nil},
		{"v1-only EVM is fully valid", func(t *testing.T) capture.Capture { return resp(t, nil, v1(entryEVM())) }, called, nil},
		{"both legs, same offers", func(t *testing.T) capture.Capture {
			return resp(t, v2(entrySVM(), entryEVM()), v1(entrySVM(), entryEVM()))
		}, called, nil},
		{"feePayer equal to payTo is never flagged", func(t *testing.T) capture.Capture {
			return resp(t, v2(mut(entrySVM(), func(e map[string]any) {
				e["extra"] = map[string]any{"feePayer": e["payTo"]}
			})), nil)
		}, called, nil},
		{"second entry graded too", func(t *testing.T) capture.Capture {
			return resp(t, v2(entrySVM(), mut(entryEVM(), func(e map[string]any) { e["maxTimeoutSeconds"] = json.Number("7200") })), nil)
		}, called, []string{"max_timeout_long@header:accepts[1].maxTimeoutSeconds"}},
		{"v1 amount mismatch is on the v1 leg", func(t *testing.T) capture.Capture {
			b := v1(entryEVM())
			b["accepts"].([]any)[0].(map[string]any)["maxAmountRequired"] = "1"
			return resp(t, v2(entryEVM()), b)
		}, called, []string{"legs_mismatch@body:accepts[0].maxAmountRequired"}},
		{"non-402 grades nothing else", func(t *testing.T) capture.Capture {
			c := resp(t, map[string]any{"x402Version": 9}, nil)
			c.Status = 200
			delete(c.Header, "Cache-Control")
			return c
		}, called, []string{"status_not_402@http:status"}},
		{"non-402 whose body is over the cap is still status_not_402", func(t *testing.T) capture.Capture {
			return capture.Capture{Outcome: capture.OverCap, Status: 200, Header: capture.Header{"Content-Type": {"text/html"}}}
		}, called, []string{"status_not_402@http:status"}},
		{"non-402 whose capture holds an oversized body is still status_not_402", func(t *testing.T) capture.Capture {
			return capture.Capture{Outcome: capture.OK, Status: 404, Body: make([]byte, capture.BodyCapBytes+1)}
		}, called, []string{"status_not_402@http:status"}},
		{"a 402 over the body cap is fetch_failed", func(t *testing.T) capture.Capture {
			return capture.Capture{Outcome: capture.OverCap, Status: 402, Header: resp(t, v2(entrySVM()), nil).Header}
		}, called, []string{"fetch_failed@http:status"}},
		{"no response at all is fetch_failed", func(t *testing.T) capture.Capture {
			return capture.Capture{Outcome: capture.Timeout}
		}, called, []string{"fetch_failed@http:status"}},
		{"trailing slash on v2 resource only warns", func(t *testing.T) capture.Capture { return resp(t, v2(entrySVM()), nil) }, called + "/",
			[]string{"resource_url_query@header:resource.url"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := rules(Lint(Input{URL: r.url, Method: "GET", Capture: r.c(t), Now: now}))
			if strings.Join(got, " ") != strings.Join(r.want, " ") {
				t.Errorf("got %v, want %v", got, r.want)
			}
		})
	}
}

// TestCustody: a report never carries a fetched value: not the addresses,
// amounts, memo, description, nor an unknown scheme, network or extension
// key written by the seller.
func TestCustody(t *testing.T) {
	secrets := []string{"SELLER-SECRET-MEMO", "Seller secret description", "secret-scheme", "secret-net", "secret-ext-key",
		"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", "987654321", "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"}
	e := entrySVM()
	e["amount"] = "0987654321"
	e["extra"].(map[string]any)["memo"] = strings.Repeat("SELLER-SECRET-MEMO", 20)
	odd := map[string]any{"scheme": "secret-scheme", "network": "secret-net", "payTo": "x", "asset": "y", "amount": "z"}
	doc := v2(e, odd)
	doc["resource"].(map[string]any)["description"] = strings.Repeat("Seller secret description", 30)
	doc["extensions"] = map[string]any{"secret-ext-key": 1}
	res := Lint(Input{URL: called, Method: "GET", Capture: resp(t, doc, v1(e)), Now: now})
	b := mustJSON(t, res)
	for _, s := range secrets {
		if strings.Contains(string(b), s) {
			t.Errorf("the result carries the fetched value %q", s)
		}
	}
	if len(res.Findings) < 5 {
		t.Errorf("expected findings, got %v", rules(res))
	}
}

func TestSummariesCountPerEntry(t *testing.T) {
	bad := entryEVM()
	bad["payTo"] = "0x12"
	bad["amount"] = "007"
	res := Lint(Input{URL: called, Method: "GET", Capture: resp(t, v2(entrySVM(), bad), nil), Now: now})
	want := []EntrySummary{
		{Index: 0, Leg: LegHeader, X402Version: 2, Scheme: "exact", Network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"},
		{Index: 1, Leg: LegHeader, X402Version: 2, Scheme: "exact", Network: "eip155:8453", Errors: 1, Warnings: 1},
	}
	if len(res.Entries) != 2 || res.Entries[0] != want[0] || res.Entries[1] != want[1] {
		t.Errorf("entries %+v", res.Entries)
	}
	if res.Conforms || !res.Dialect.V2Header || res.Dialect.V1Body {
		t.Errorf("conforms %v dialect %+v", res.Conforms, res.Dialect)
	}
	b, _ := json.Marshal(res.Findings[0])
	for _, k := range []string{`"rule"`, `"severity"`, `"leg"`, `"entry"`, `"field"`, `"message"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("finding JSON lacks %s: %s", k, b)
		}
	}
}

func TestChainQueries(t *testing.T) {
	bad := entryEVM()
	bad["asset"] = "0x1"
	in := Input{URL: called, Method: "GET", Capture: resp(t, v2(entrySVM(), bad, entryEVM()), v1(entrySVM())), Now: now}
	qs := ChainQueries(in)
	if len(qs) != 3 {
		t.Fatalf("queries %+v", qs)
	}
	if qs[0].Leg != LegHeader || qs[0].Entry != 0 || qs[0].Family != FamilySolana ||
		qs[1].Entry != 2 || qs[1].Family != FamilyEVM || qs[2].Leg != LegBody || qs[2].Network != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" {
		t.Errorf("queries %+v", qs)
	}
	in.Capture.Status = 200
	if len(ChainQueries(in)) != 0 {
		t.Error("a non-402 gets look-ups")
	}
}

func TestPositiveIntEdges(t *testing.T) {
	for _, tc := range []struct {
		n  string
		ok bool
	}{{"1", true}, {"60.0", true}, {"6e1", true}, {"1e30", true}, {"1e31", false}, {"1e-31", false}, {"0", false}, {"-1", false}, {"0.5", false}} {
		if _, ok := positiveInt(json.Number(tc.n)); ok != tc.ok {
			t.Errorf("positiveInt(%s) = %v", tc.n, ok)
		}
	}
}

func TestEntryTermsUnifiesTheDialects(t *testing.T) {
	ch := Decode(resp(t, v2(entryEVM()), v1(entryEVM())))
	h, ok1 := ch.Header.EntryTerms(0, 0)
	b, ok2 := ch.Body.EntryTerms(0, 0)
	if !ok1 || !ok2 || h != b || h.Network != "eip155:8453" || h.Amount != "10000" || h.Scheme != "exact" {
		t.Errorf("header %+v, body %+v", h, b)
	}
	if _, ok := ch.Header.EntryTerms(1, 0); ok {
		t.Error("a missing entry has terms")
	}
}

// TestChainSkipsUnknownSchemes: scheme_unknown says nothing else of such an
// entry is graded, and standard clients skip it; so it is neither looked up
// on chain nor graded from an observation.
func TestChainSkipsUnknownSchemes(t *testing.T) {
	other := entrySVM()
	other["scheme"] = "deferred"
	in := Input{URL: called, Method: "GET", Capture: resp(t, v2(other, entrySVM()), nil), Now: now}
	qs := ChainQueries(in)
	if len(qs) != 1 || qs[0].Entry != 1 {
		t.Fatalf("queries %+v, want only entry 1", qs)
	}
	in.Chain = &ChainFacts{Observations: []ChainObservation{
		{Leg: LegHeader, Entry: 0, Family: FamilySolana},
		{Leg: LegHeader, Entry: 1, Family: FamilySolana, AssetIsMint: true, ATAExists: true, ATAIsTokenAccount: true},
	}}
	got := strings.Join(rules(Lint(in)), " ")
	if got != "scheme_unknown@header:accepts[0].scheme" {
		t.Errorf("got %s", got)
	}
}

// TestResourceURLEquivalence: the resource URL is compared with the called
// URL as RFC 3986 §6.2.2 compares URIs: scheme and host without case, the
// default port implied, percent-encodings by their hex value without case,
// and an encoded unreserved character as that character. What differs after
// that is graded.
func TestResourceURLEquivalence(t *testing.T) {
	const base = "https://api.seller.example"
	for _, r := range []struct{ called, resource, want string }{
		{base + "/v1/weather?city=paris&units=c", base + "/v1/weather?city=paris&units=c", ""},
		{base + ":443/v1/weather", base + "/v1/weather", ""},
		{"http://api.seller.example/v1/weather", "http://api.seller.example:80/v1/weather", ""},
		{"HTTPS://API.Seller.Example/v1/weather", base + "/v1/weather", ""},
		{base + "/v1/caf%C3%A9", base + "/v1/caf%c3%a9", ""},
		{base + "/v1/caf%C3%A9", base + "/v1/café", ""},
		{base + "/v1/a%7Eb", base + "/v1/a~b", ""},
		{base + "/v1/%41pi", base + "/v1/Api", ""},
		{base + "/v1/weather?q=%7e", base + "/v1/weather?q=~", ""},
		{base + "/v1/a%2Fb", base + "/v1/a/b", "resource_url_mismatch@header:resource.url"},
		{base + "/v1/Weather", base + "/v1/weather", "resource_url_mismatch@header:resource.url"},
		{base + ":8443/v1/weather", base + "/v1/weather", "resource_url_mismatch@header:resource.url"},
		{"http://api.seller.example/v1/weather", base + "/v1/weather", "resource_url_mismatch@header:resource.url"},
		{base + "/v1/weather?city=paris", base + "/v1/weather?city=rome", "resource_url_query@header:resource.url"},
	} {
		doc := v2(entrySVM())
		doc["resource"] = map[string]any{"url": r.resource}
		got := strings.Join(rules(Lint(Input{URL: r.called, Method: "GET", Capture: resp(t, doc, nil), Now: now})), " ")
		if got != r.want {
			t.Errorf("called %s, resource %s: got %q, want %q", r.called, r.resource, got, r.want)
		}
	}
}

// TestV1NetworksOfTheV1Client: a v1 seller on any network the v1 client
// names lints clean, and both legs compare through the same mapping.
func TestV1NetworksOfTheV1Client(t *testing.T) {
	for name, id := range map[string]string{"abstract": "eip155:2741", "abstract-testnet": "eip155:11124", "story": "eip155:1514",
		"educhain": "eip155:41923", "skale-base-sepolia": "eip155:324705682"} {
		h := entryEVM()
		h["network"] = id
		b := v1(entryEVM())
		b["accepts"].([]any)[0].(map[string]any)["network"] = name
		for _, c := range []capture.Capture{resp(t, nil, b), resp(t, v2(h), b)} {
			if got := rules(Lint(Input{URL: called, Method: "GET", Capture: c, Now: now})); len(got) != 0 {
				t.Errorf("%s: %v", name, got)
			}
		}
	}
}

// TestBazaarPropertyNamedRef: bazaar.md (Schema Validation) bounds the
// values of $ref and $id; a property that happens to be named "$ref" is not
// a reference, while a reference keyword whose value is not a string still
// fails to compile.
func TestBazaarPropertyNamedRef(t *testing.T) {
	for _, r := range []struct {
		name   string
		schema map[string]any
		info   any
		want   string
	}{
		{"property named $ref", map[string]any{"type": "object", "properties": map[string]any{"$ref": map[string]any{"type": "string"}}, "required": []any{"$ref"}},
			map[string]any{"$ref": "a"}, ""},
		{"property named $id, info invalid", map[string]any{"type": "object", "properties": map[string]any{"$id": map[string]any{"type": "integer"}}},
			map[string]any{"$id": "a"}, "bazaar_info_invalid@header:extensions.bazaar.info"},
		{"$ref keyword that is an object", map[string]any{"$ref": map[string]any{"type": "string"}}, "a", "bazaar_schema_invalid@header:extensions.bazaar.schema"},
		{"remote $ref", map[string]any{"$ref": "https://schemas.example/x.json"}, "a", "bazaar_schema_invalid@header:extensions.bazaar.schema"},
		{"remote $ref under a property named $ref", map[string]any{"properties": map[string]any{"$ref": map[string]any{"$ref": "https://schemas.example/x.json"}}}, map[string]any{}, "bazaar_schema_invalid@header:extensions.bazaar.schema"},
	} {
		doc := v2(entryEVM())
		doc["extensions"] = map[string]any{"bazaar": map[string]any{"info": r.info, "schema": r.schema}}
		got := strings.Join(rules(Lint(Input{URL: called, Method: "GET", Capture: resp(t, doc, nil), Now: now})), " ")
		if got != r.want {
			t.Errorf("%s: got %q, want %q", r.name, got, r.want)
		}
	}
}

// TestBazaarNotJudged: an info the validator does not judge (its outcome
// hangs on a draft-7 format it does not check; a document past its bounds)
// draws no bazaar
// finding, while the same info against a schema it judges still does; an
// absent info is a finding whatever the schema.
func TestBazaarNotJudged(t *testing.T) {
	big := map[string]any{}
	for i := range jsonschema.DefaultLimits.SchemaNodes {
		big[fmt.Sprintf("p%d", i)] = map[string]any{}
	}
	for _, r := range []struct {
		name   string
		schema map[string]any
		info   any
		absent bool
		want   string
	}{
		{"draft-07 format email, not checked", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}, "nope", false, ""},
		{"draft-07 format email, the outcome does not hang on it", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "format": "email", "type": "integer"}, "nope", false, "bazaar_info_invalid@header:extensions.bazaar.info"},
		{"draft-07 format uri, checked", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "format": "uri"}, "nope", false, "bazaar_info_invalid@header:extensions.bazaar.info"},
		{"2020-12 format email, an annotation", map[string]any{"format": "email", "type": "integer"}, "nope", false, "bazaar_info_invalid@header:extensions.bazaar.info"},
		{"past the schema size bound", map[string]any{"type": "integer", "properties": big}, "nope", false, ""},
		{"past the bound, info absent", map[string]any{"type": "integer", "properties": big}, nil, true, "bazaar_info_invalid@header:extensions.bazaar.info"},
		{"number past the exponent bound", map[string]any{"maximum": json.Number("1e10001")}, json.Number("1"), false, ""},
	} {
		doc := v2(entryEVM())
		bz := map[string]any{"schema": r.schema}
		if !r.absent {
			bz["info"] = r.info
		}
		doc["extensions"] = map[string]any{"bazaar": bz}
		got := strings.Join(rules(Lint(Input{URL: called, Method: "GET", Capture: resp(t, doc, nil), Now: now})), " ")
		if got != r.want {
			t.Errorf("%s: got %q, want %q", r.name, got, r.want)
		}
	}
}

// TestUSDAtomic: a listed USD price in atomic units of a 6-decimal
// stablecoin, at the 6-decimal edge.
func TestUSDAtomic(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"0.01", "10000", true}, {"$0.01", "10000", true}, {" 1 ", "1000000", true}, {"1.", "1000000", true},
		{".5", "500000", true}, {"0.000001", "1", true}, {"0.0000010", "1", true}, {"0", "0", true},
		{"0.0000001", "", false}, {"-1", "", false}, {"1e3", "", false}, {"", "", false}, {".", "", false},
		{"0x10", "", false}, {"1.2.3", "", false}, {strings.Repeat("9", 31), "", false},
	} {
		got, ok := usdAtomic(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("usdAtomic(%q) = %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
