package main

// This file builds the synthetic cases: clean v2-header and v1-body
// challenges on Solana and EVM, and one mutation per rule clause on both
// legs and both families. Nothing here decides an expected output.

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

const (
	seller     = "https://api.seller.example/v1/weather"
	caseNow    = "2026-12-01T10:00:00.000Z"
	solMain    = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	usdcSol    = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	payeeSol   = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4"
	feePayer   = "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"
	usdcBase   = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	payeeEVM   = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	facilEVM   = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	tokenkeg   = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	systemProg = "11111111111111111111111111111111"
)

type M = map[string]any

func num(s string) json.Number { return json.Number(s) }

// deep copies a JSON value built from M, []any and scalars.
func deep(v any) any {
	switch t := v.(type) {
	case M:
		o := M{}
		for k, x := range t {
			o[k] = deep(x)
		}
		return o
	case []any:
		o := make([]any, len(t))
		for i, x := range t {
			o[i] = deep(x)
		}
		return o
	}
	return v
}

func svmEntry() M {
	return M{"scheme": "exact", "network": solMain, "amount": "10000", "asset": usdcSol, "payTo": payeeSol,
		"maxTimeoutSeconds": num("60"), "extra": M{"feePayer": feePayer}}
}

func evmEntry() M {
	return M{"scheme": "exact", "network": "eip155:8453", "amount": "10000", "asset": usdcBase, "payTo": payeeEVM,
		"maxTimeoutSeconds": num("60"), "extra": M{"name": "USD Coin", "version": "2"}}
}

// v1 turns a v2 entry into its v1 form.
func v1(e M) M {
	o := deep(e).(M)
	o["maxAmountRequired"] = o["amount"]
	delete(o, "amount")
	switch o["network"] {
	case solMain:
		o["network"] = "solana"
	case "eip155:8453":
		o["network"] = "base"
	}
	o["resource"] = seller
	o["description"] = "Current weather for one city, as JSON."
	o["mimeType"] = "application/json"
	return o
}

func v2Doc(entries ...M) M {
	acc := make([]any, len(entries))
	for i, e := range entries {
		acc[i] = e
	}
	return M{"x402Version": num("2"), "error": "Payment required",
		"resource": M{"url": seller, "description": "Current weather for one city, as JSON.", "mimeType": "application/json"},
		"accepts":  acc}
}

func v1Doc(entries ...M) M {
	acc := make([]any, len(entries))
	for i, e := range entries {
		acc[i] = v1(e)
	}
	return M{"x402Version": num("1"), "error": "X-PAYMENT header is required", "accepts": acc}
}

func enc(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func b64(v any) string { return base64.StdEncoding.EncodeToString(enc(v)) }

// resp is a response under construction.
type resp struct {
	outcome string
	status  int
	headers [][2]string
	body    *string
}

func (r *resp) set(name, value string) *resp {
	for i, h := range r.headers {
		if strings.EqualFold(h[0], name) {
			r.headers[i][1] = value
			return r
		}
	}
	r.headers = append(r.headers, [2]string{name, value})
	return r
}

func (r *resp) unset(name string) *resp {
	for i, h := range r.headers {
		if strings.EqualFold(h[0], name) {
			r.headers = append(r.headers[:i], r.headers[i+1:]...)
			return r
		}
	}
	return r
}

func (r *resp) text(s string) *resp { r.body = &s; return r }

func base402() *resp {
	r := &resp{outcome: "ok", status: 402}
	r.set("Content-Type", "application/json")
	r.set("Cache-Control", "no-store")
	return r
}

// header402 is a header-only v2 challenge with body {}.
func header402(doc M) *resp { return base402().set("PAYMENT-REQUIRED", b64(doc)).text("{}") }

// body402 is a v1 body-only challenge.
func body402(doc M) *resp { return base402().text(string(enc(doc))) }

// both402 carries both legs.
func both402(h, b M) *resp { return base402().set("PAYMENT-REQUIRED", b64(h)).text(string(enc(b))) }

type synth struct {
	id, note, url, method string
	r                     *resp
	chain                 []chainObs
}

func str(s string) *string { return &s }

// entryMutation is one change to an entry, tried on both legs and both
// families where it applies.
type entryMutation struct {
	id, note string
	apply    func(e M, leg string)
	families []string // "svm", "evm"; nil = both
	legs     []string // "header", "body"; nil = both
}

func amountKey(leg string) string {
	if leg == "body" {
		return "maxAmountRequired"
	}
	return "amount"
}

var entryMutations = []entryMutation{
	{id: "clean", note: "nothing changed: conforms"},
	{id: "scheme-missing", note: "no scheme", apply: func(e M, _ string) { delete(e, "scheme") }},
	{id: "scheme-unknown", note: "scheme deferred: standard clients skip it", apply: func(e M, _ string) { e["scheme"] = "deferred" }},
	{id: "scheme-unknown-other-fields", note: "an unknown scheme with no amount and a payTo of its own form: only the scheme warns", apply: func(e M, l string) {
		e["scheme"] = "batch-settlement"
		delete(e, amountKey(l))
		e["payTo"] = "merchant"
	}},
	{id: "network-missing", note: "no network", apply: func(e M, _ string) { delete(e, "network") }},
	{id: "network-not-caip2", note: "a legacy name on the v2 leg", legs: []string{"header"}, apply: func(e M, _ string) { e["network"] = "base" }},
	{id: "network-caip2-on-v1", note: "a CAIP-2 id on the v1 leg", legs: []string{"body"}, apply: func(e M, _ string) { e["network"] = "eip155:8453" }},
	{id: "network-unknown-v1", note: "a legacy name v1 clients do not know", legs: []string{"body"}, apply: func(e M, _ string) { e["network"] = "base-mainnet" }},
	{id: "network-abstract-v1", note: "abstract, a name the v1 client (legacy x402 network.ts) knows: conforms", legs: []string{"body"}, families: []string{"evm"}, apply: func(e M, _ string) { e["network"] = "abstract" }},
	{id: "network-skale-base-sepolia-v1", note: "skale-base-sepolia, a name the v1 client knows: conforms", legs: []string{"body"}, families: []string{"evm"}, apply: func(e M, _ string) { e["network"] = "skale-base-sepolia" }},
	{id: "amount-missing", note: "no amount", apply: func(e M, l string) { delete(e, amountKey(l)) }},
	{id: "amount-number", note: "the amount as a JSON number", apply: func(e M, l string) { e[amountKey(l)] = num("10000") }},
	{id: "amount-decimal", note: "a decimal amount", apply: func(e M, l string) { e[amountKey(l)] = "0.01" }},
	{id: "amount-zero", note: "amount 0", apply: func(e M, l string) { e[amountKey(l)] = "000" }},
	{id: "amount-leading-zeros", note: "amount with leading zeros", apply: func(e M, l string) { e[amountKey(l)] = "010000" }},
	{id: "asset-missing", note: "no asset", apply: func(e M, _ string) { delete(e, "asset") }},
	{id: "payto-invalid", note: "payTo not an address of the family", apply: func(e M, _ string) { e["payTo"] = "not-an-address" }},
	{id: "payto-placeholder-svm", note: "payTo the system program", families: []string{"svm"}, apply: func(e M, _ string) { e["payTo"] = systemProg }},
	{id: "payto-placeholder-evm", note: "payTo the zero address", families: []string{"evm"}, apply: func(e M, _ string) { e["payTo"] = "0x0000000000000000000000000000000000000000" }},
	{id: "payto-checksum-bad", note: "one letter of a checksummed payTo in the wrong case", families: []string{"evm"}, apply: func(e M, _ string) { e["payTo"] = "0x209693bc6afc0C5328bA36FaF03C514EF312287C" }},
	{id: "payto-lowercase", note: "an all-lower-case EVM payTo carries no checksum: conforms", families: []string{"evm"}, apply: func(e M, _ string) { e["payTo"] = strings.ToLower(payeeEVM) }},
	{id: "asset-short", note: "a 31-byte Solana asset", families: []string{"svm"}, apply: func(e M, _ string) { e["asset"] = "1111111111111111111111111111111" }},
	{id: "timeout-missing", note: "no maxTimeoutSeconds", apply: func(e M, _ string) { delete(e, "maxTimeoutSeconds") }},
	{id: "timeout-zero", note: "maxTimeoutSeconds 0", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = num("0") }},
	{id: "timeout-string", note: "maxTimeoutSeconds as a string", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = "60" }},
	{id: "timeout-fraction", note: "maxTimeoutSeconds 1.5", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = num("1.5") }},
	{id: "timeout-60.0", note: "maxTimeoutSeconds 60.0 is the integer 60: conforms", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = num("60.0") }},
	{id: "timeout-huge-exponent", note: "maxTimeoutSeconds 1e999999999 is not read as an integer", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = num("1e999999999") }},
	{id: "timeout-3600", note: "maxTimeoutSeconds 3600, the edge: conforms", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = num("3600") }},
	{id: "timeout-3601", note: "maxTimeoutSeconds 3601", apply: func(e M, _ string) { e["maxTimeoutSeconds"] = num("3601") }},
	{id: "extra-not-object", note: "extra a string", apply: func(e M, _ string) { e["extra"] = "x" }},
	{id: "fee-payer-missing", note: "exact on Solana without extra.feePayer", families: []string{"svm"}, apply: func(e M, _ string) { delete(e["extra"].(M), "feePayer") }},
	{id: "fee-payer-invalid", note: "extra.feePayer not a key", families: []string{"svm"}, apply: func(e M, _ string) { e["extra"].(M)["feePayer"] = "0xabc" }},
	{id: "fee-payer-is-payto", note: "feePayer equal to payTo (merchant-sponsored fees) MAY be: conforms", families: []string{"svm"}, apply: func(e M, _ string) { e["extra"].(M)["feePayer"] = payeeSol }},
	{id: "memo-256", note: "a 256-byte memo, the edge: conforms", families: []string{"svm"}, apply: func(e M, _ string) { e["extra"].(M)["memo"] = strings.Repeat("m", 256) }},
	{id: "memo-257", note: "a 257-byte memo", families: []string{"svm"}, apply: func(e M, _ string) { e["extra"].(M)["memo"] = strings.Repeat("m", 257) }},
	{id: "memo-multibyte", note: "a memo of 129 two-byte characters (258 bytes, 129 characters)", families: []string{"svm"}, apply: func(e M, _ string) { e["extra"].(M)["memo"] = strings.Repeat("é", 129) }},
	{id: "memo-number", note: "a numeric memo", families: []string{"svm"}, apply: func(e M, _ string) { e["extra"].(M)["memo"] = num("7") }},
	{id: "method-unknown", note: "assetTransferMethod transferFrom", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"].(M)["assetTransferMethod"] = "transferFrom" }},
	{id: "eip3009-no-name", note: "eip3009 without extra.name", families: []string{"evm"}, apply: func(e M, _ string) {
		x := e["extra"].(M)
		x["assetTransferMethod"] = "eip3009"
		delete(x, "name")
	}},
	{id: "eip3009-complete", note: "eip3009 with the domain: conforms", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"].(M)["assetTransferMethod"] = "eip3009" }},
	{id: "no-method-no-domain", note: "no method and no domain: clients sign eip3009 by default and cannot (an error)", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"] = M{} }},
	{id: "no-method-no-version", note: "no method, extra.name but no extra.version: an error on extra.version only", families: []string{"evm"}, apply: func(e M, _ string) { delete(e["extra"].(M), "version") }},
	{id: "no-method-empty-name", note: "no method, an empty extra.name: an error on extra.name only", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"].(M)["name"] = "" }},
	{id: "no-extra-evm", note: "no extra at all on EVM", families: []string{"evm"}, apply: func(e M, _ string) { delete(e, "extra") }},
	{id: "permit2-no-domain", note: "permit2 needs no domain here: conforms", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"] = M{"assetTransferMethod": "permit2"} }},
	{id: "erc7710-no-domain", note: "erc7710 needs no domain: conforms", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"] = M{"assetTransferMethod": "erc7710"} }},
	{id: "method-number", note: "assetTransferMethod a number", families: []string{"evm"}, apply: func(e M, _ string) { e["extra"].(M)["assetTransferMethod"] = num("1") }},
	{id: "upto-complete", note: "upto with every extra field its network requires: conforms", apply: func(e M, _ string) { uptoify(e) }},
	{id: "upto-bare", note: "upto with no extra", apply: func(e M, _ string) { uptoify(e); delete(e, "extra") }},
	{id: "upto-facilitator-invalid", note: "upto on EVM with a bad facilitatorAddress", families: []string{"evm"}, apply: func(e M, _ string) {
		uptoify(e)
		e["extra"].(M)["facilitatorAddress"] = "0x1234"
	}},
	{id: "upto-withdraw-zero", note: "upto on Solana with withdrawDelay 0", families: []string{"svm"}, apply: func(e M, _ string) {
		uptoify(e)
		e["extra"].(M)["withdrawDelay"] = num("0")
	}},
	{id: "upto-token-program-bad", note: "upto on Solana with another program as tokenProgram", families: []string{"svm"}, apply: func(e M, _ string) {
		uptoify(e)
		e["extra"].(M)["tokenProgram"] = systemProg
	}},
	{id: "upto-memo-long", note: "upto on Solana with a 300-byte memo", families: []string{"svm"}, apply: func(e M, _ string) {
		uptoify(e)
		e["extra"].(M)["memo"] = strings.Repeat("x", 300)
	}},
	{id: "description-500", note: "a 500-character description, the edge (v1: in the entry)", legs: []string{"body"}, apply: func(e M, _ string) { e["description"] = strings.Repeat("d", 500) }},
	{id: "description-501", note: "a 501-character description (v1: in the entry)", legs: []string{"body"}, apply: func(e M, _ string) { e["description"] = strings.Repeat("é", 501) }},
	{id: "resource-missing-v1", note: "a v1 entry without resource", legs: []string{"body"}, apply: func(e M, _ string) { delete(e, "resource") }},
	{id: "resource-relative-v1", note: "a relative v1 resource", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = "/v1/weather" }},
	{id: "resource-other-host-v1", note: "a v1 resource on another host", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = "https://other.example/v1/weather" }},
	{id: "resource-query-v1", note: "a v1 resource with a query the called URL lacks", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = seller + "?city=lisbon" }},
	{id: "resource-slash-v1", note: "a v1 resource with a trailing slash", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = seller + "/" }},
	{id: "resource-path-v1", note: "a v1 resource on another path", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = "https://api.seller.example/v1/forecast" }},
	{id: "resource-default-port-v1", note: "a v1 resource naming the default port: same origin, conforms", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = "https://api.seller.example:443/v1/weather" }},
	{id: "resource-http-v1", note: "a v1 resource on http where https was called", legs: []string{"body"}, apply: func(e M, _ string) { e["resource"] = "http://api.seller.example/v1/weather" }},
	{id: "network-family-unknown", note: "a CAIP-2 network of another family: addresses not graded", legs: []string{"header"}, apply: func(e M, _ string) {
		e["network"] = "stellar:pubnet"
		e["payTo"] = "merchant"
	}},
}

func uptoify(e M) {
	e["scheme"] = "upto"
	if strings.HasPrefix(e["network"].(string), "eip155") || e["network"] == "base" {
		e["extra"] = M{"name": "USD Coin", "version": "2", "facilitatorAddress": facilEVM}
		return
	}
	e["extra"] = M{"feePayer": feePayer, "receiverAuthorizer": feePayer, "withdrawDelay": num("3600"), "tokenProgram": tokenkeg}
}

func contains(set []string, s string) bool {
	if set == nil {
		return true
	}
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func synthetic() []synth {
	var out []synth
	add := func(id, note string, r *resp) {
		out = append(out, synth{id: id, note: note, url: seller, method: "GET", r: r})
	}
	// Every entry rule on both legs and both families.
	for _, m := range entryMutations {
		for _, fam := range []string{"svm", "evm"} {
			if !contains(m.families, fam) {
				continue
			}
			for _, leg := range []string{"header", "body"} {
				if !contains(m.legs, leg) {
					continue
				}
				var e M
				if fam == "svm" {
					e = svmEntry()
				} else {
					e = evmEntry()
				}
				var r *resp
				if leg == "header" {
					if m.apply != nil {
						m.apply(e, leg)
					}
					r = header402(v2Doc(e))
				} else {
					doc := v1Doc(e)
					if m.apply != nil {
						m.apply(doc["accepts"].([]any)[0].(M), leg)
					}
					r = body402(doc)
				}
				add("entry-"+m.id+"-"+fam+"-"+leg, m.note+" ("+fam+", "+leg+" leg)", r)
			}
		}
	}
	out = append(out, documentCases()...)
	out = append(out, dialectCases()...)
	out = append(out, httpCases()...)
	out = append(out, extensionCases()...)
	out = append(out, chainCases()...)
	return out
}

func documentCases() []synth {
	var out []synth
	add := func(id, note string, r *resp, at ...string) {
		u := seller
		if len(at) == 1 {
			u = at[0]
		}
		out = append(out, synth{id: "document-" + id, note: note, url: u, method: "GET", r: r})
	}
	mod := func(f func(M)) M {
		d := v2Doc(svmEntry())
		f(d)
		return d
	}
	add("v2-resource-missing", "a v2 header without resource", header402(mod(func(d M) { delete(d, "resource") })))
	add("v2-resource-url-number", "a v2 resource.url that is a number", header402(mod(func(d M) { d["resource"].(M)["url"] = num("1") })))
	add("v2-resource-relative", "a relative v2 resource.url", header402(mod(func(d M) { d["resource"].(M)["url"] = "/v1/weather" })))
	add("v2-resource-ftp", "an ftp v2 resource.url", header402(mod(func(d M) { d["resource"].(M)["url"] = "ftp://api.seller.example/v1/weather" })))
	add("v2-resource-other-port", "a v2 resource.url on another port", header402(mod(func(d M) { d["resource"].(M)["url"] = "https://api.seller.example:8443/v1/weather" })))
	add("v2-resource-host-case", "a v2 resource.url whose host differs only in case: same origin", header402(mod(func(d M) { d["resource"].(M)["url"] = "https://API.Seller.Example/v1/weather" })))
	add("v2-resource-pct-case", "a v2 resource.url whose percent-encodings differ from the called URL's only in hex case: same resource, conforms",
		header402(mod(func(d M) { d["resource"].(M)["url"] = "https://api.seller.example/v1/caf%c3%a9" })), "https://api.seller.example/v1/caf%C3%A9")
	add("v2-resource-pct-unreserved", "a v2 resource.url spelling an unreserved character the called URL percent-encodes: same resource, conforms",
		header402(mod(func(d M) { d["resource"].(M)["url"] = "https://api.seller.example/v1/weather" })), "https://api.seller.example/v1/%77eather")
	add("v2-resource-pct-slash", "a v2 resource.url with / where the called URL has %2F: another path",
		header402(mod(func(d M) { d["resource"].(M)["url"] = "https://api.seller.example/v1/a/b" })), "https://api.seller.example/v1/a%2Fb")
	add("v2-resource-query", "a v2 resource.url with a query", header402(mod(func(d M) { d["resource"].(M)["url"] = seller + "?units=metric" })))
	add("v2-description-long", "a 501-character v2 resource.description", header402(mod(func(d M) { d["resource"].(M)["description"] = strings.Repeat("w", 501) })))
	add("accepts-empty-header", "accepts [] in the header", header402(mod(func(d M) { d["accepts"] = []any{} })))
	add("accepts-missing-header", "no accepts in the header", header402(mod(func(d M) { delete(d, "accepts") })))
	add("accepts-object-body", "accepts an object in a v1 body", body402(func() M { d := v1Doc(svmEntry()); d["accepts"] = M{}; return d }()))
	add("entry-not-object-header", "accepts[0] a number, accepts[1] a clean entry", header402(mod(func(d M) { d["accepts"] = []any{num("1"), evmEntry()} })))
	add("entry-not-object-body", "accepts[1] a string in a v1 body", body402(func() M {
		d := v1Doc(svmEntry())
		d["accepts"] = append(d["accepts"].([]any), "x")
		return d
	}()))
	add("two-entries-header", "a clean Solana and a clean EVM entry in one header: conforms", header402(v2Doc(svmEntry(), evmEntry())))
	add("second-entry-bad-header", "the second entry's payTo is invalid: only entry 1 errs", header402(v2Doc(svmEntry(), func() M { e := evmEntry(); e["payTo"] = "0x12"; return e }())))
	return out
}

func dialectCases() []synth {
	var out []synth
	add := func(id, note string, r *resp) {
		out = append(out, synth{id: "dialect-" + id, note: note, url: seller, method: "GET", r: r})
	}
	add("both-legs-clean-svm", "v2 header and v1 body with the same Solana offer: conforms", both402(v2Doc(svmEntry()), v1Doc(svmEntry())))
	add("both-legs-clean-evm-case", "same EVM offer, payTo lower-case in one leg (EVM addresses compare without case): conforms",
		both402(v2Doc(evmEntry()), func() M {
			d := v1Doc(evmEntry())
			d["accepts"].([]any)[0].(M)["payTo"] = strings.ToLower(payeeEVM)
			return d
		}()))
	mismatch := func(id string, f func(M)) {
		d := v1Doc(svmEntry())
		f(d["accepts"].([]any)[0].(M))
		add("both-legs-"+id, "the v1 body differs from the header in "+id, both402(v2Doc(svmEntry()), d))
	}
	mismatch("amount", func(e M) { e["maxAmountRequired"] = "20000" })
	mismatch("network", func(e M) { e["network"] = "solana-devnet" })
	mismatch("pay-to", func(e M) { e["payTo"] = feePayer })
	mismatch("asset", func(e M) { e["asset"] = feePayer })
	mismatch("scheme", func(e M) { e["scheme"] = "upto" })
	mismatch("amount-leading-zero", func(e M) { e["maxAmountRequired"] = "010000" })
	mismatch("amount-empty", func(e M) { e["maxAmountRequired"] = "" })
	mismatch("network-unknown", func(e M) { e["network"] = "solana-mainnet" })
	add("both-legs-entry-count", "the header has two entries, the body one",
		both402(v2Doc(svmEntry(), evmEntry()), v1Doc(svmEntry())))
	add("v2-body-only", "a v2 document only in the body: graded as a body leg, plus the missing header",
		base402().text(string(enc(v2Doc(svmEntry())))))
	add("v2-body-only-bad-entry", "a v2 document only in the body with a bad amount",
		base402().text(string(enc(v2Doc(func() M { e := evmEntry(); e["amount"] = "x"; return e }())))))
	add("header-undecodable", "PAYMENT-REQUIRED is not base64", base402().set("PAYMENT-REQUIRED", "%%%not-base64%%%").text("{}"))
	add("header-array", "PAYMENT-REQUIRED is base64 of a JSON array", base402().set("PAYMENT-REQUIRED", b64([]any{1})).text("{}"))
	add("header-unpadded", "PAYMENT-REQUIRED without base64 padding: conforms",
		base402().set("PAYMENT-REQUIRED", strings.TrimRight(b64(v2Doc(svmEntry(), evmEntry())), "=")).text("{}"))
	add("header-version-1", "a header carrying x402Version 1", base402().set("PAYMENT-REQUIRED", b64(func() M { d := v2Doc(svmEntry()); d["x402Version"] = num("1"); return d }())).text("{}"))
	add("header-undecodable-v2-body", "a broken header and a v2 body: the body is graded", base402().set("PAYMENT-REQUIRED", "!!").text(string(enc(v2Doc(svmEntry())))))
	add("header-and-v2-body", "a good header and a v2 copy in the body: the body is the server's business", both402(v2Doc(svmEntry()), v2Doc(evmEntry())))
	add("body-no-version", "a body with accepts and no x402Version, no header", base402().text(string(enc(M{"accepts": []any{v1(svmEntry())}}))))
	add("body-version-3", "a body with x402Version 3, no header", base402().text(string(enc(func() M { d := v1Doc(svmEntry()); d["x402Version"] = num("3"); return d }()))))
	add("empty-402", "a 402 with an empty body and no header", base402().text(""))
	add("html-402", "a 402 with an HTML body and no header", base402().set("Content-Type", "text/html").text("<html>pay</html>"))
	add("json-402-not-x402", "a 402 with a JSON body that is not x402", base402().text(`{"message":"pay up"}`))
	return out
}

func httpCases() []synth {
	var out []synth
	add := func(id, note string, r *resp) {
		out = append(out, synth{id: "http-" + id, note: note, url: seller, method: "GET", r: r})
	}
	good := func() *resp { return header402(v2Doc(svmEntry())) }
	r := good()
	r.status = 200
	add("status-200", "a 200 carrying a valid challenge: one error, nothing more", r)
	r = good().text("{\"accepts\":\"broken\"}")
	r.status = 401
	add("status-401", "a 401", r)
	add("fetch-failed", "no response", &resp{outcome: "failed"})
	add("timeout", "the fetch timed out", &resp{outcome: "timeout"})
	add("over-cap", "the body is over the cap", &resp{outcome: "over_cap", status: 402})
	add("over-cap-200", "a 200 whose body is over the cap (a large page): the status is what is wrong", &resp{outcome: "over_cap", status: 200})
	add("no-cache-control", "no Cache-Control", good().unset("Cache-Control"))
	add("cache-no-cache", "Cache-Control: no-cache only", good().set("Cache-Control", "no-cache, max-age=0"))
	add("cache-private-no-store", "Cache-Control: private, No-Store: conforms", good().set("Cache-Control", "private, No-Store"))
	add("cors-no-expose", "CORS enabled without Access-Control-Expose-Headers", good().set("Access-Control-Allow-Origin", "*"))
	add("cors-expose-other", "CORS exposing other headers only", good().set("Access-Control-Allow-Origin", "*").set("Access-Control-Expose-Headers", "X-Request-Id, PAYMENT-RESPONSE"))
	add("cors-expose-pr", "CORS exposing payment-required (any case): conforms", good().set("Access-Control-Allow-Origin", "https://app.example").set("Access-Control-Expose-Headers", "x-request-id, payment-required"))
	add("cors-expose-star", "CORS exposing *: conforms", good().set("Access-Control-Allow-Origin", "*").set("Access-Control-Expose-Headers", "*"))
	add("no-cors-no-expose", "no CORS, no expose: conforms", good())
	return out
}

func withExt(name string, ext any) M {
	d := v2Doc(svmEntry())
	d["extensions"] = M{name: ext}
	return d
}

func bazaarSchema() M {
	return M{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		"properties": M{"input": M{"type": "object", "properties": M{"type": M{"const": "http"}, "method": M{"enum": []any{"GET", "HEAD", "DELETE"}}},
			"required": []any{"type", "method"}}, "output": M{"$ref": "#/$defs/out"}},
		"$defs":    M{"out": M{"type": "object", "required": []any{"type"}}},
		"required": []any{"input"}}
}

func siwxInfo() M {
	return M{"domain": "api.seller.example", "uri": seller, "version": "1", "nonce": "a1b2c3d4e5f67890a1b2c3d4e5f67890",
		"issuedAt": "2026-12-01T09:59:00.000Z", "expirationTime": "2026-12-01T10:04:00.000Z", "statement": "Sign in"}
}

func extensionCases() []synth {
	var out []synth
	add := func(id, note string, r *resp) {
		out = append(out, synth{id: "ext-" + id, note: note, url: seller, method: "GET", r: r})
	}
	bz := func(info any, schema any) M { return M{"info": info, "schema": schema} }
	goodInfo := func() M { return M{"input": M{"type": "http", "method": "GET"}, "output": M{"type": "json"}} }
	add("bazaar-valid", "bazaar info valid against its schema: conforms", header402(withExt("bazaar", bz(goodInfo(), bazaarSchema()))))
	add("bazaar-info-invalid", "bazaar info with method POST against a GET schema", header402(withExt("bazaar", bz(M{"input": M{"type": "http", "method": "POST"}}, bazaarSchema()))))
	add("bazaar-local-ref-fails", "bazaar output failing a same-document $ref", header402(withExt("bazaar", bz(M{"input": M{"type": "http", "method": "GET"}, "output": M{}}, bazaarSchema()))))
	add("bazaar-info-missing", "bazaar without info", header402(withExt("bazaar", M{"schema": bazaarSchema()})))
	add("bazaar-remote-ref", "a bazaar schema with a remote $ref: never loaded", header402(withExt("bazaar", bz(goodInfo(), M{"$ref": "https://schemas.example/bazaar.json"}))))
	add("bazaar-remote-id", "a bazaar schema with an absolute $id", header402(withExt("bazaar", bz(goodInfo(), func() M { s := bazaarSchema(); s["$id"] = "https://schemas.example/x"; return s }()))))
	add("bazaar-property-named-ref", "a bazaar schema with a property named $ref (a name, not a reference): conforms",
		header402(withExt("bazaar", bz(M{"input": M{"type": "http", "method": "GET"}, "$ref": "x"},
			func() M { s := bazaarSchema(); s["properties"].(M)["$ref"] = M{"type": "string"}; return s }()))))
	add("bazaar-ref-object", "a bazaar schema whose $ref keyword is an object: does not compile",
		header402(withExt("bazaar", bz(goodInfo(), M{"$ref": M{"type": "object"}}))))
	add("bazaar-schema-missing", "bazaar without schema", header402(withExt("bazaar", M{"info": goodInfo()})))
	add("bazaar-schema-uncompilable", "a bazaar schema whose type is a number", header402(withExt("bazaar", bz(goodInfo(), M{"type": num("5")}))))
	add("bazaar-unknown-metaschema", "a bazaar schema naming an unknown $schema", header402(withExt("bazaar", bz(goodInfo(), M{"$schema": "https://schemas.example/meta", "type": "object"}))))
	add("siwx-valid", "sign-in-with-x info matching the called URL and time: conforms", header402(withExt("sign-in-with-x", M{"info": siwxInfo(), "schema": M{"type": "object"}})))
	siwx := func(id, note string, f func(M)) {
		info := siwxInfo()
		f(info)
		add("siwx-"+id, note, header402(withExt("sign-in-with-x", M{"info": info})))
	}
	siwx("domain-other", "domain of another host", func(i M) { i["domain"] = "other.example" })
	siwx("domain-with-default-port", "domain with the default port spelled out", func(i M) { i["domain"] = "api.seller.example:443" })
	siwx("domain-case", "domain differing only in case: conforms", func(i M) { i["domain"] = "API.seller.example" })
	siwx("uri-other-origin", "uri on another origin", func(i M) { i["uri"] = "https://other.example/v1/weather" })
	siwx("uri-other-path", "uri on another path of the same origin: conforms", func(i M) { i["uri"] = "https://api.seller.example/v1/other" })
	siwx("uri-missing", "no uri", func(i M) { delete(i, "uri") })
	siwx("version-2", "version 2", func(i M) { i["version"] = "2" })
	siwx("nonce-short", "a 31-hex nonce", func(i M) { i["nonce"] = "a1b2c3d4e5f67890a1b2c3d4e5f6789" })
	siwx("nonce-not-hex", "a 32-character nonce with a non-hex letter", func(i M) { i["nonce"] = "g1b2c3d4e5f67890a1b2c3d4e5f67890" })
	siwx("issued-future", "issuedAt after the check time", func(i M) { i["issuedAt"] = "2026-12-01T10:00:00.001Z" })
	siwx("issued-now", "issuedAt equal to the check time: conforms", func(i M) { i["issuedAt"] = caseNow })
	siwx("issued-missing", "no issuedAt", func(i M) { delete(i, "issuedAt") })
	siwx("issued-garbage", "issuedAt not a time", func(i M) { i["issuedAt"] = "yesterday" })
	siwx("expired", "expirationTime equal to the check time", func(i M) { i["expirationTime"] = caseNow })
	siwx("expiration-absent", "no expirationTime (optional): conforms", func(i M) { delete(i, "expirationTime") })
	add("siwx-info-missing", "sign-in-with-x without info", header402(withExt("sign-in-with-x", M{"schema": M{}})))
	siwxPort := synth{id: "ext-siwx-port", note: "a called URL on port 8443: domain must carry the port", url: "https://api.seller.example:8443/v1/weather", method: "GET",
		r: header402(func() M {
			d := withExt("sign-in-with-x", M{"info": func() M {
				i := siwxInfo()
				i["domain"] = "api.seller.example:8443"
				i["uri"] = "https://api.seller.example:8443/v1/weather"
				return i
			}()})
			d["resource"].(M)["url"] = "https://api.seller.example:8443/v1/weather"
			return d
		}())}
	out = append(out, siwxPort)
	add("payid-valid", "payment-identifier required false: conforms", header402(withExt("payment-identifier", M{"info": M{"required": false}})))
	add("payid-with-id", "payment-identifier with a 16-character id: conforms", header402(withExt("payment-identifier", M{"info": M{"required": true, "id": "pay_0123456789ab"}})))
	add("payid-required-string", "payment-identifier required as a string", header402(withExt("payment-identifier", M{"info": M{"required": "false"}})))
	add("payid-id-short", "payment-identifier id of 15 characters", header402(withExt("payment-identifier", M{"info": M{"required": true, "id": "pay_0123456789a"}})))
	add("payid-id-chars", "payment-identifier id with a space", header402(withExt("payment-identifier", M{"info": M{"required": true, "id": "pay 0123456789abc"}})))
	add("payid-info-missing", "payment-identifier without info", header402(withExt("payment-identifier", M{})))
	add("extensions-not-object", "extensions an array", header402(func() M { d := v2Doc(svmEntry()); d["extensions"] = []any{}; return d }()))
	add("extension-known-not-object", "extensions.bazaar a string", header402(withExt("bazaar", "x")))
	add("extension-unknown-not-object", "an unknown extension that is a number (its key is never named)", header402(withExt("seller-secret-key", num("1"))))
	add("extension-unknown-object", "an unknown extension object: not graded, conforms", header402(withExt("agent-payment-bounty", M{"info": M{}})))
	return out
}

func chainCases() []synth {
	var out []synth
	add := func(id, note string, r *resp, obs ...chainObs) {
		out = append(out, synth{id: "chain-" + id, note: note, url: seller, method: "GET", r: r, chain: obs})
	}
	svm := header402(v2Doc(svmEntry()))
	evm := header402(v2Doc(evmEntry()))
	sol := func(o chainObs) chainObs { o.Leg, o.Family = "header", "solana"; return o }
	ev := func(o chainObs) chainObs { o.Leg, o.Family = "header", "evm"; return o }
	add("svm-ready", "mint and token account as they should be: conforms", svm, sol(chainObs{AssetIsMint: true, ATAExists: true, ATAIsTokenAccount: true}))
	add("svm-not-mint", "the asset is not a mint", svm, sol(chainObs{}))
	add("svm-ata-missing", "payTo has no associated token account", svm, sol(chainObs{AssetIsMint: true}))
	add("svm-ata-wrong", "the ATA address holds something else", svm, sol(chainObs{AssetIsMint: true, ATAExists: true}))
	add("svm-unavailable", "the node did not answer", svm, sol(chainObs{Unavailable: true}))
	add("svm-other-network", "the node serves devnet", svm, sol(chainObs{OtherNetwork: true}))
	add("svm-v1-body", "the v1 body's entry looked up: ATA missing", body402(v1Doc(svmEntry())),
		chainObs{Leg: "body", Family: "solana", AssetIsMint: true})
	add("evm-match", "name() and version() match extra: conforms", evm, ev(chainObs{Name: str("USD Coin"), Version: str("2")}))
	add("evm-name-mismatch", "name() differs from extra.name", evm, ev(chainObs{Name: str("USDC"), Version: str("2")}))
	add("evm-version-unreadable", "version() not answered; name matches", evm, ev(chainObs{Name: str("USD Coin")}))
	add("evm-unavailable", "the node did not answer", evm, ev(chainObs{Unavailable: true}))
	add("evm-skipped", "the lint's cap of distinct look-ups was reached before this entry", evm, ev(chainObs{Skipped: true}))
	add("svm-skipped", "the lint's cap of distinct look-ups was reached before this entry", svm, sol(chainObs{Skipped: true}))
	add("evm-other-network", "the node serves another chain", evm, ev(chainObs{OtherNetwork: true}))
	add("evm-no-domain-in-extra", "no extra.name/version to compare; the contract answers", header402(v2Doc(func() M { e := evmEntry(); e["extra"] = M{"assetTransferMethod": "permit2"}; return e }())),
		ev(chainObs{Name: str("USD Coin"), Version: str("2")}))
	add("svm-unknown-scheme", "an entry of a scheme lint does not know is skipped by clients: its observation is not graded",
		header402(v2Doc(func() M { e := svmEntry(); e["scheme"] = "deferred"; return e }())), sol(chainObs{}))
	add("entry-out-of-range", "an observation for an entry that does not exist is ignored", svm, sol(chainObs{Entry: 5}))
	return out
}
