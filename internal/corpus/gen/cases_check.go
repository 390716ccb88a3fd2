package main

import (
	"strings"
)

// checkCases builds the synthetic check-op cases: every state, every rule of
// state_rule's first-match order (also where two rules match), and every
// reading of the field rule at its edge.
func checkCases(g *gen) {
	// fleet returns a fresh fleet challenge (v1 body, v2 header) for seller.
	fleet := func() (*O, *O) { return fleetBody(seller, memoA), fleetHeader(seller, memoA) }

	// ---- (6) POPULATED ----------------------------------------------------
	g.check("check-populated-fleet", "state_rule (6): the fleet's full challenge — v1 body + v2 PAYMENT-REQUIRED header, every field present, consistent and equal.",
		seller, fleet402(seller, memoA))
	{
		b, h := fleetBody(weatherURL, memoB), fleetHeader(weatherURL, memoB)
		g.check("check-populated-url-with-query", "R2: the resource equals the called URL including its query string.", weatherURL, resp(402, h, b))
	}
	{
		b, h := fleetBody(stagingURL, memoC), fleetHeader(stagingURL, memoC)
		g.check("check-populated-http-port", "R2: an http URL with an explicit port, resource equal byte for byte.", stagingURL, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.maxAmountRequired")
		g.check("check-populated-max-amount-absent", "field_rule: amounts consistent when maxAmountRequired is absent (R14).", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.extra.memo")
		g.check("check-populated-top-level-memo-fallback", "field_rule / R15: extra.memo absent, the body's top-level memo is the body memo.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.extra.memo", "")
		g.check("check-populated-extra-memo-empty-falls-back", "R15: an empty extra.memo is absent and falls back to the top-level memo.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.extra.memo", nil)
		g.check("check-populated-extra-memo-null-falls-back", "R15/R3: a null extra.memo is absent and falls back to the top-level memo.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "memo", memoB)
		g.check("check-populated-extra-memo-wins-over-top-level", "R15: extra.memo present wins; a different top-level memo is not read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.resource", obj("url", seller, "description", description))
		g.check("check-unconfigured-body-resource-object", "R1 (corrected, issue 11): the body leg reads \"resource = resource\" and a field is present only as a non-empty string; a body resource object is absent, never read through its url. Everything else is populated: UNCONFIGURED, not POPULATED.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(h, "resource")
		put(h, "accepts.0.resource", seller)
		g.check("check-populated-header-resource-in-accepts", "R1 (corrected, issue 11): no top-level resource in the header; a string accepts[0].resource is not resource.url and carries no header resource; the body resource equals the URL.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.resource", "https://seller.example/api/other")
		g.check("check-populated-header-top-level-resource-wins", "R1 (corrected, issue 11): the header's top-level resource.url equals the URL; a string accepts[0].resource in the header is not resource.url and is not read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(h, "resource")
		put(h, "accepts.0.resource", obj("url", "https://seller.example/api/other"))
		g.check("check-resource-mismatch-header-accepts-resource-url", "R1 (corrected, issue 11): the header leg reads accepts[0].resource.url as well as the top-level resource.url; with no top-level resource, a differing accepts[0].resource.url is a mismatch.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.resource", obj("url", "https://seller.example/api/other"))
		g.check("check-resource-mismatch-header-accepts-url-differs-top-level-equal", "R1 (corrected, issue 11): both header places are read; the top-level resource.url equals the URL but accepts[0].resource.url differs: RESOURCE-MISMATCH (a place skipped never grades higher).", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "resource.url", "https://seller.example/api/other")
		put(h, "accepts.0.resource", obj("url", seller))
		drop(b, "accepts.0.resource")
		g.check("check-resource-mismatch-header-top-level-differs-accepts-equal", "R1 (corrected, issue 11): both header places are read; accepts[0].resource.url equals the URL but the top-level resource.url differs: RESOURCE-MISMATCH.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.resource", obj("url", seller))
		g.check("check-populated-header-both-resource-places-equal", "R1 (corrected, issue 11): the header's top-level resource.url and accepts[0].resource.url both equal the URL, as does the body resource.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.resource", obj("url", seller))
		drop(h, "resource")
		g.check("check-unconfigured-body-resource-object-no-header-resource", "R1 (corrected, issue 11): a body resource object is absent and the header carries none: resource_equals_called_url null, UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.amount", "0")
		put(b, "accepts.0.maxAmountRequired", "0")
		put(h, "accepts.0.amount", "0")
		g.check("check-populated-amount-zero", "R3: \"0\" is a string of digits, so the amount is present.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		big := "184467440737095516160000"
		put(b, "accepts.0.amount", big)
		put(b, "accepts.0.maxAmountRequired", big)
		put(h, "accepts.0.amount", big)
		g.check("check-populated-amount-beyond-64-bits", "R3: amount equality is string equality; an amount beyond 64 bits is still a string of digits.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		at(b, "accepts.0").set("outputSchema", obj("input", obj("type", "http", "method", "GET"), "output", nil))
		at(b, "accepts.0.extra").set("feePayer", otherPayTo).set("decimals", 6)
		at(h, "accepts.0.extra").set("feePayer", otherPayTo)
		put(h, "extensions", obj("bazaar", obj("discoverable", true)))
		g.check("check-populated-extra-fields", "field_rule: fields beyond the published ones are not read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		second := fleetAccept(seller, memoB)
		put(second, "payTo", otherPayTo)
		put(second, "network", "solana-devnet")
		put(b, "accepts", []any{at(b, "accepts.0"), second})
		hs := obj("scheme", "exact", "network", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "amount", "20000", "asset", usdcMint, "payTo", otherPayTo, "maxTimeoutSeconds", 60, "extra", obj("memo", memoB))
		put(h, "accepts", []any{at(h, "accepts.0"), hs})
		g.check("check-populated-second-accept-ignored", "field_rule: only accepts[0] is read on both legs; a differing accepts[1] is not graded.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		g.check("check-populated-body-surrounded-by-whitespace", "R17: whitespace around the one JSON value still parses.", seller, resp(402, h, "\n  "+string(enc(b))+"\n\n"))
	}
	{
		b, h := fleet()
		g.check("check-header-padded", "R4: standard base64 with padding decodes (the fleet's form).", seller, resp(402, b64(h), b))
	}
	{
		b, h := fleet()
		g.check("check-header-unpadded", "R4: standard base64 without padding decodes.", seller, resp(402, unpadded(b64(h)), b))
	}
	{
		b, h := fleet()
		g.check("check-header-whitespace-wrapped", "R4: surrounding space, tab, CR and LF around the base64 are ignored.", seller, resp(402, " \t"+b64(h)+" \r\n", b))
	}
	{
		b, h := fleet()
		g.check("check-header-unpadded-whitespace-wrapped", "R4: unpadded base64 with surrounding whitespace decodes.", seller, resp(402, "\t"+unpadded(b64(h))+" ", b))
	}
	// Descriptions (R6): code points, not bytes or UTF-16 units.
	descCase := func(id, note, d string) {
		b, h := fleet()
		put(b, "accepts.0.description", d)
		put(h, "resource.description", d)
		g.check(id, note, seller, resp(402, h, b))
	}
	descCase("check-description-500", "description_flag / R6: exactly 500 code points is not overlong.", strings.Repeat("a", 500))
	descCase("check-description-501", "description_flag / R6: 501 code points is overlong; the state stays POPULATED (a factor only).", strings.Repeat("a", 501))
	descCase("check-description-500-two-byte", "R6: 500 code points of é (1,000 bytes) is not overlong.", strings.Repeat("é", 500))
	descCase("check-description-501-two-byte", "R6: 501 code points of é is overlong.", strings.Repeat("é", 501))
	descCase("check-description-500-mixed-euro", "R6: 499 ASCII + one € (3 bytes) = 500 code points, not overlong.", strings.Repeat("x", 499)+"€")
	descCase("check-description-501-mixed-euro", "R6: 500 ASCII + one € = 501 code points, overlong.", strings.Repeat("x", 500)+"€")
	descCase("check-description-emoji-300", "R6: 300 emoji are 300 code points (600 UTF-16 units, 1,200 bytes): not overlong.", strings.Repeat("🌦", 300))
	descCase("check-description-emoji-501", "R6: 501 emoji are 501 code points: overlong.", strings.Repeat("🌦", 501))
	descCase("check-description-combining-marks", "R6: e + combining acute is two code points; 250 of them are 500 code points, not overlong.", strings.Repeat("e\u0301", 250))
	descCase("check-description-combining-marks-501", "R6: 250 e + combining acute plus one more letter: 501 code points, overlong.", strings.Repeat("e\u0301", 250)+"!")
	{
		b, h := fleet()
		put(b, "accepts.0.description", raw(`"`+strings.Repeat(`\u00e9`, 500)+`"`))
		g.check("check-description-500-json-escaped", "R6: the description is counted after JSON decoding: 500 \\u00e9 escapes (3,000 bytes of text) are 500 code points.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.description", raw(`"`+strings.Repeat(`\ud83c\udf26`, 501)+`"`))
		g.check("check-description-501-json-surrogate-pairs", "R6: 501 escaped surrogate pairs decode to 501 code points: overlong.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.description", 12345)
		g.check("check-description-not-a-string", "R6: a non-string description is not overlong.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.description")
		put(h, "resource.description", strings.Repeat("h", 600))
		g.check("check-description-header-only-not-read", "R6: the description is the body leg's; an overlong header description is not read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.description", raw("\"Paid weather forecast \xff\xfe for one city\""))
		g.check("check-body-invalid-utf8-in-string", "R17: invalid UTF-8 bytes inside a JSON string are accepted as the JSON decoder accepts them: the body parses.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.maxTimeoutSeconds", raw("1e400"))
		put(b, "x402Version", raw("1"+strings.Repeat("0", 400)))
		g.check("check-populated-body-number-beyond-float64", "R17: JSON numbers have no magnitude limit; 1e400 and a 401-digit integer in fields not graded leave the body one JSON value: POPULATED.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.maxTimeoutSeconds", raw("-1e400"))
		g.check("check-populated-header-number-beyond-float64", "R4/R17: a decoded header object holding -1e400 is still a JSON object: decodable, POPULATED.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.amount", raw("1e400"))
		g.check("check-unconfigured-amount-number-beyond-float64", "R3/R17: a number-typed amount of any magnitude is absent; the body still parses and every other field is read.", seller, resp(402, h, b))
	}
	{
		body := padTo(enc(fleetBody(seller, memoA)), 65536)
		g.check("check-body-65536", "R7: a body of exactly 65,536 bytes is within the cap and graded.", seller, resp(402, fleetHeader(seller, memoA), body))
	}

	// ---- (5) UNCONFIGURED -------------------------------------------------
	{
		b, h := fleet()
		drop(b, "accepts.0.payTo")
		drop(h, "accepts.0.payTo")
		g.check("check-unconfigured-recipient-absent", "state_rule (5): the recipient (payTo) is absent on both legs; pay_to equality null.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.payTo", "")
		g.check("check-unconfigured-recipient-empty", "R3: an empty payTo is absent; the header carries one, so pay_to equality is false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.payTo", 12345)
		g.check("check-unconfigured-recipient-not-a-string", "R3: a non-string payTo is absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.extra.usdc_token_account")
		g.check("check-unconfigured-token-account-absent", "state_rule (5): the token account (extra.usdc_token_account) is absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.extra.usdc_token_account", "")
		g.check("check-unconfigured-token-account-empty", "R3: an empty token account is absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.extra", "usdc_token_account="+tokenAccount)
		g.check("check-unconfigured-extra-not-object", "field_rule: extra that is not an object carries no token account; the memo falls back to the top-level memo (R15).", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.extra.memo")
		drop(b, "memo")
		g.check("check-unconfigured-memo-absent", "state_rule (5): the body memo is absent (no extra.memo, no top-level memo); the header carries one, so memo equality is false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.extra.memo")
		put(b, "memo", memoB)
		g.check("check-unconfigured-top-level-memo-differs", "R15: the fallback top-level memo differs from the header memo: memo equality false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.extra.memo", 20260001)
		drop(b, "memo")
		g.check("check-unconfigured-memo-number-typed", "R3: a number-typed memo is absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.resource")
		g.check("check-unconfigured-resource-absent-body", "R13: resource is a core body-leg field; the header resource alone equals the URL, the state is UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.resource", "")
		g.check("check-unconfigured-resource-empty", "R3/R13: an empty body resource is absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.resource")
		drop(h, "resource")
		g.check("check-unconfigured-resource-absent-both", "R16: neither leg carries a resource: resource_equals_called_url is null.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.resource", obj("description", description))
		g.check("check-unconfigured-resource-object-without-url", "R1: a body resource object (here without url) carries no resource.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.amount")
		g.check("check-unconfigured-amount-absent-v1-max-only", "R14: a body with only maxAmountRequired has no amount; amounts_consistent false; amount equality false (header carries one).", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.amount", 10000)
		put(b, "accepts.0.maxAmountRequired", 10000)
		g.check("check-amount-number-typed", "R3: number-typed amounts are absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.maxAmountRequired", 10000)
		g.check("check-populated-max-amount-number-typed", "R3: a number-typed maxAmountRequired is absent, and an absent maxAmountRequired is consistent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.amount", "010000")
		put(b, "accepts.0.maxAmountRequired", "010000")
		g.check("check-amount-leading-zero", "R3: \"010000\" is present but not equal to the header's \"10000\": inconsistent, amount equality false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.maxAmountRequired", "010000")
		g.check("check-unconfigured-max-amount-leading-zero", "R3: maxAmountRequired \"010000\" is not equal to amount \"10000\": inconsistent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.maxAmountRequired", "20000")
		g.check("check-unconfigured-max-amount-differs", "field_rule: maxAmountRequired present and different from amount: inconsistent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.amount", "20000")
		g.check("check-unconfigured-header-amount-differs", "field_rule: the header amount differs from the body amount: inconsistent and amount equality false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(h, "accepts.0.amount")
		g.check("check-unconfigured-header-amount-absent", "field_rule: an absent header amount keeps the amounts consistent, but amount equality is false (exactly one leg carries it).", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.amount", 10000)
		g.check("check-unconfigured-header-amount-number-typed", "R3: a number-typed header amount is absent: consistent, amount equality false.", seller, resp(402, h, b))
	}
	for _, a := range []struct{ id, v, why string }{
		{"check-unconfigured-amount-decimal", "0.01", "a decimal"},
		{"check-unconfigured-amount-dollar", "$0.01", "a price label"},
		{"check-unconfigured-amount-negative", "-10000", "a signed number"},
		{"check-unconfigured-amount-space", " 10000", "digits with a space"},
		{"check-unconfigured-amount-empty", "", "an empty string"},
	} {
		b, h := fleet()
		put(b, "accepts.0.amount", a.v)
		g.check(a.id, "R3: an amount is a string of digits; "+a.why+" is absent.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.extra.memo", memoB)
		g.check("check-unconfigured-header-memo-differs", "state_rule (5): header-to-body memo equality fails.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(h, "accepts.0.extra.memo")
		g.check("check-unconfigured-header-memo-absent", "A1 equality: exactly one leg carries the memo: false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts.0.payTo", otherPayTo)
		g.check("check-unconfigured-header-pay-to-differs", "state_rule (5): header-to-body payTo equality fails.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(h, "accepts.0.payTo")
		g.check("check-unconfigured-header-pay-to-absent", "A1 equality: the body carries payTo, the header does not: false.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts", []any{})
		g.check("check-unconfigured-header-accepts-empty", "R5 (header leg): empty header accepts carries no memo, amount or payTo; the header's top-level resource is still read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(h, "accepts", at(h, "accepts.0"))
		g.check("check-unconfigured-header-accepts-not-array", "R5 (header leg): header accepts that is an object, not an array, carries nothing.", seller, resp(402, h, b))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-not-json", "state_rule (5): the 402 body cannot be JSON-decoded, with a decodable header present.", seller, resp(402, h, "Payment Required", "content-type", "text/plain"))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-html", "state_rule (5): an HTML 402 body with a decodable header.", seller, resp(402, h, "<!doctype html><html><head><title>402 Payment Required</title></head><body><h1>Payment Required</h1></body></html>"))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-empty", "R17: an empty body does not parse; header-only challenges with no body grade UNCONFIGURED.", seller, resp(402, h, nil))
	}
	{
		b, h := fleet()
		g.check("check-unconfigured-body-trailing-garbage", "R17: a JSON value followed by more than whitespace does not parse.", seller, resp(402, h, string(enc(b))+" trailing"))
	}
	{
		b, h := fleet()
		g.check("check-unconfigured-body-two-json-values", "R17: two JSON values back to back are not one value.", seller, resp(402, h, string(enc(b))+"\n"+string(enc(b))))
	}
	{
		b, h := fleet()
		g.check("check-unconfigured-body-gzip-not-decompressed", "R7: the body as received on the wire is never decompressed; gzip bytes do not parse.", seller,
			resp(402, h, gzipped(enc(b)), "content-encoding", "gzip", "content-type", "application/json"))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-json-array", "R5/R17: a JSON array body parses but carries no body-leg field.", seller, resp(402, h, []any{fleetAccept(seller, memoA)}))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-json-string", "R5/R17: a JSON string body parses but carries no field.", seller, resp(402, h, `"payment required"`))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-json-number", "R5/R17: a JSON number body parses but carries no field.", seller, resp(402, h, "402"))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-body-json-null", "R5/R17: a JSON null body parses but carries no field.", seller, resp(402, h, "null"))
	}
	{
		_, h := fleet()
		g.check("check-unconfigured-v2-header-only-empty-object", "R13: a v2 header-only challenge (body {}) carries no body-leg core field: UNCONFIGURED.", seller, resp(402, h, obj()))
	}
	{
		b, h := fleet()
		put(b, "accepts", []any{})
		g.check("check-accepts-empty", "R5 (corrected, issue 11): empty accepts — every accepts[0] field absent; the top-level memo fallback does not depend on accepts[0] and is read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts", at(b, "accepts.0"))
		g.check("check-accepts-not-array", "R5: accepts that is an object, not an array, carries no accepts[0] field; the top-level memo is still the body memo.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts", []any{"exact", at(b, "accepts.0")})
		g.check("check-accepts-first-not-object", "R5: accepts[0] is a string; accepts[1] is never read; the top-level memo is the body memo.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts", []any{nil, at(b, "accepts.0")})
		g.check("check-accepts-first-null", "R5: accepts[0] is null; the top-level memo is the body memo.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts")
		g.check("check-accepts-missing", "R5 (corrected, issue 11): no accepts at all; the top-level memo fallback is still read.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts", []any{})
		drop(b, "memo")
		g.check("check-accepts-empty-no-top-level-memo", "R5: empty accepts and no top-level memo: the body carries no memo; memo equality false (the header carries one).", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		evm := obj("scheme", "exact", "network", "base", "amount", "10000", "maxAmountRequired", "10000", "asset", evmUSDCBase, "payTo", evmPayTo,
			"resource", seller, "description", description, "mimeType", "application/json", "maxTimeoutSeconds", 60, "extra", obj("name", "USD Coin", "version", "2"))
		put(b, "accepts", []any{evm, at(b, "accepts.0")})
		g.check("check-unconfigured-first-accept-evm", "field_rule: only accepts[0] is read; an EVM first entry carries no token account or memo and its payTo differs from the header's.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.description", strings.Repeat("d", 501))
		drop(b, "accepts.0.extra.usdc_token_account")
		g.check("check-unconfigured-description-overlong", "description_flag: overlong is reported and never changes the state (UNCONFIGURED from a missing token account).", seller, resp(402, h, b))
	}

	// ---- (4) AMOUNTS-ONLY -------------------------------------------------
	amountsOnly := func() (*O, *O) {
		b := obj("x402Version", 1, "accepts", []any{obj("scheme", "exact", "network", "solana", "amount", "10000", "maxAmountRequired", "10000",
			"asset", usdcMint, "resource", seller, "description", description, "mimeType", "application/json", "maxTimeoutSeconds", 60)})
		h := obj("x402Version", 2, "resource", obj("url", seller, "description", description, "mimeType", "application/json"),
			"accepts", []any{obj("scheme", "exact", "network", solanaMainnet, "amount", "10000", "asset", usdcMint, "maxTimeoutSeconds", 60)})
		return b, h
	}
	{
		b, h := amountsOnly()
		g.check("check-amounts-only-basic", "state_rule (4): amounts present and consistent; recipient, token account and memo all absent. AMOUNTS-ONLY also matches (5); (4) wins.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		drop(b, "accepts.0.maxAmountRequired")
		g.check("check-amounts-only-max-absent", "state_rule (4) with maxAmountRequired absent (R14).", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		drop(h, "accepts.0.amount")
		g.check("check-amounts-only-header-amount-absent", "field_rule: an absent header amount is consistent, so (4) matches though amount equality is false.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		drop(b, "accepts.0.resource")
		drop(h, "resource")
		g.check("check-amounts-only-resource-absent", "state_rule (4) precedes (5): a missing resource does not stop AMOUNTS-ONLY.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		at(b, "accepts.0").set("payTo", "").set("extra", obj("usdc_token_account", "", "memo", ""))
		put(b, "memo", "")
		g.check("check-amounts-only-empty-strings", "R3: empty payTo, token account, extra.memo and top-level memo are all absent.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		at(b, "accepts.0").set("payTo", nil).set("extra", nil)
		g.check("check-amounts-only-null-fields", "R3: null payTo and null extra are absent.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		at(h, "accepts.0").set("payTo", payTo).set("extra", obj("memo", memoA, "usdc_token_account", tokenAccount))
		g.check("check-amounts-only-header-carries-fields", "state_rule (4) reads the body leg (R13): the header's payTo and memo do not stop AMOUNTS-ONLY; their equalities are false.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		put(b, "accepts.0.maxAmountRequired", "20000")
		g.check("check-unconfigured-amounts-only-max-differs", "state_rule (4) needs consistent amounts: maxAmountRequired differs, so (5) UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		put(h, "accepts.0.amount", "9999")
		g.check("check-unconfigured-amounts-only-header-amount-differs", "state_rule (4) needs the header amount absent or equal: it differs, so UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		drop(b, "accepts.0.amount")
		g.check("check-unconfigured-amounts-only-max-only", "R14: maxAmountRequired alone is not \"the amounts present\": UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		put(b, "accepts.0.payTo", payTo)
		put(h, "accepts.0.payTo", payTo)
		g.check("check-unconfigured-amounts-and-recipient", "state_rule (4) needs ALL of recipient, token account and memo absent: a recipient alone makes it UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		put(b, "memo", memoA)
		g.check("check-unconfigured-amounts-and-top-level-memo", "R15: a top-level memo is the body memo, so not all three are absent: UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := amountsOnly()
		put(b, "accepts.0.extra", obj("usdc_token_account", tokenAccount))
		g.check("check-unconfigured-amounts-and-token-account", "state_rule (4): a token account alone makes it UNCONFIGURED.", seller, resp(402, h, b))
	}

	// ---- (3) HEADER-MISSING -----------------------------------------------
	{
		b, _ := fleet()
		g.check("check-header-missing-absent", "state_rule (3): no PAYMENT-REQUIRED header; R11: equalities false where the body carries the field.", seller, resp(402, nil, b))
	}
	{
		b := obj("x402Version", 1, "error", "X-PAYMENT header is required", "accepts", []any{obj(
			"scheme", "exact", "network", "base-sepolia", "maxAmountRequired", "1000", "resource", seller, "description", "", "mimeType", "",
			"payTo", evmPayTo, "maxTimeoutSeconds", 60, "asset", evmUSDCSepolia, "extra", obj("name", "USDC", "version", "2"))})
		g.check("check-header-missing-v1-only-seller", "state_rule (3): an x402 v1 seller (maxAmountRequired only, no header); R14: no amount.", seller, resp(402, nil, b))
	}
	{
		b, _ := amountsOnly()
		g.check("check-header-missing-amounts-only-shape", "state_rule (3) precedes (4): header missing and an amounts-only body: HEADER-MISSING.", seller, resp(402, nil, b))
	}
	{
		g.check("check-header-missing-empty-body", "state_rule (3): no header, empty body (not parseable); every body field absent, equalities null.", seller, resp(402, nil, nil))
	}
	{
		g.check("check-header-missing-html-402", "state_rule (3): an HTML 402 without a header.", seller, resp(402, nil, "<html><body><h1>402 Payment Required</h1><p>Subscribe to continue.</p></body></html>"))
	}
	{
		b, h := fleet()
		g.check("check-header-urlsafe", "R4: URL-safe base64 (- and _) is undecodable.", seller, resp(402, urlSafeHeader(h), b))
	}
	{
		b, h := fleet()
		g.check("check-header-urlsafe-unpadded", "R4: unpadded URL-safe base64 is undecodable.", seller, resp(402, unpadded(urlSafeHeader(h)), b))
	}
	{
		b, h := fleet()
		g.check("check-header-missing-inner-line-breaks", "R4: only surrounding whitespace is ignored; base64 broken into 76-character lines is undecodable.", seller, resp(402, wrap76(b64(h)), b))
	}
	{
		b, h := fleet()
		s := b64(h)
		g.check("check-header-missing-inner-space", "R4: a space inside the base64 is undecodable.", seller, resp(402, s[:40]+" "+s[40:], b))
	}
	{
		b, h := fleet()
		g.check("check-header-missing-raw-json", "R4: the header carries raw JSON, not base64: undecodable.", seller, resp(402, string(enc(h)), b))
	}
	{
		b, h := fleet()
		g.check("check-unconfigured-header-json-array", "R4 (corrected, issue 11): base64 of a JSON array is decoded (rule (3) is for a header that cannot be base64/JSON decoded); it carries no accepts[0] field, so the equalities fail: UNCONFIGURED, not HEADER-MISSING.", seller, resp(402, b64([]any{h}), b))
	}
	{
		b, _ := fleet()
		g.check("check-unconfigured-header-json-string", "R4 (corrected, issue 11): base64 of a JSON string is decoded; it carries no field: UNCONFIGURED.", seller, resp(402, b64(`"payment required"`), b))
	}
	{
		b, _ := fleet()
		g.check("check-unconfigured-header-json-null", "R4 (corrected, issue 11): base64 of JSON null is decoded; it carries no field: UNCONFIGURED.", seller, resp(402, b64("null"), b))
	}
	{
		b, _ := fleet()
		g.check("check-unconfigured-header-json-number", "R4 (corrected, issue 11), R17: base64 of a JSON number (1e400, beyond float64) is decoded; it carries no field: UNCONFIGURED.", seller, resp(402, b64("1e400"), b))
	}
	{
		b, _ := amountsOnly()
		g.check("check-amounts-only-header-json-array", "R4 (corrected, issue 11): a decoded non-object header carries nothing, so the state follows rules (4)-(6); an amounts-only body gives AMOUNTS-ONLY, not HEADER-MISSING.", seller, resp(402, b64("[]"), b))
	}
	{
		b, _ := fleet()
		g.check("check-header-missing-not-json", "R4: the header is base64 of text that is not JSON.", seller, resp(402, b64("x402 payment required: 10000 USDC units"), b))
	}
	{
		b, h := fleet()
		g.check("check-header-missing-json-trailing-garbage", "R4/R17: the decoded header is an object followed by garbage: undecodable.", seller, resp(402, b64(string(enc(h))+"}"), b))
	}
	{
		b, _ := fleet()
		g.check("check-header-missing-empty-value", "state_rule (3): a present but empty header value is undecodable; header_present true.", seller, resp(402, "", b))
	}
	{
		b, h := fleet()
		s := b64(h)
		g.check("check-header-missing-bad-padding", "R4: padding that does not complete the last quantum is undecodable.", seller, resp(402, unpadded(s)+"===", b))
	}
	{
		b, h := fleet()
		s := b64(h)
		if strings.HasSuffix(s, "==") {
			g.check("check-header-missing-partial-padding", "R29: one '=' where two are due is undecodable.", seller, resp(402, s[:len(s)-1], b))
		} else {
			g.check("check-header-missing-partial-padding", "R29: padding on a complete quantum is undecodable.", seller, resp(402, s+"=", b))
		}
	}
	{
		b, h := fleet()
		// Make the last quantum carry non-zero trailing bits: R29 accepts them.
		s := unpadded(b64(string(enc(h)) + " "))
		last := s[len(s)-1]
		alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		idx := strings.IndexByte(alphabet, last)
		s = s[:len(s)-1] + string(alphabet[idx|1])
		g.check("check-header-nonzero-trailing-bits", "R29: non-zero trailing bits in the last quantum are ignored, as common decoders do.", seller, resp(402, s, b))
	}
	{
		b, _ := fleet()
		put(b, "accepts.0.description", strings.Repeat("w", 501))
		g.check("check-header-missing-description-overlong", "description_flag: reported on a HEADER-MISSING challenge too; the state is unchanged.", seller, resp(402, nil, b))
	}
	{
		b, _ := fleet()
		drop(b, "accepts.0.extra.memo")
		drop(b, "memo")
		drop(b, "accepts.0.payTo")
		g.check("check-header-missing-nulls-where-neither-leg", "R11: with no header, equality is null where the body lacks the field (memo, payTo) and false where it has it (amount).", seller, resp(402, nil, b))
	}

	// ---- (2) RESOURCE-MISMATCH --------------------------------------------
	resourceCase := func(id, note, url, bodyRes, headerRes string) {
		b, h := fleetBody(url, memoA), fleetHeader(url, memoA)
		put(b, "accepts.0.resource", bodyRes)
		put(h, "resource.url", headerRes)
		g.check(id, note, url, resp(402, h, b))
	}
	resourceCase("check-resource-mismatch-body", "state_rule (2): the body resource differs from the called URL.", seller, "https://seller.example/api/other", seller)
	resourceCase("check-resource-mismatch-header", "state_rule (2): the header's resource.url differs from the called URL.", seller, seller, "https://seller.example/api/other")
	resourceCase("check-resource-mismatch-both", "state_rule (2): both legs carry a different resource.", seller, "https://other.example/api/paid", "https://other.example/api/paid")
	resourceCase("check-resource-trailing-slash", "R2: no normalisation — a trailing slash on the resource is a mismatch.", seller, seller+"/", seller+"/")
	resourceCase("check-resource-trailing-slash-called", "R2: the called URL has a trailing slash the resource lacks: mismatch.", seller+"/", seller, seller)
	resourceCase("check-resource-case", "R2: host case differs (Seller.example): mismatch.", seller, "https://Seller.example/api/paid", "https://Seller.example/api/paid")
	resourceCase("check-resource-case-path", "R2: path case differs: mismatch.", seller, "https://seller.example/API/paid", seller)
	resourceCase("check-resource-default-port", "R2: an explicit default port is not normalised away: mismatch.", seller, "https://seller.example:443/api/paid", seller)
	resourceCase("check-resource-query-missing", "R2: the resource lacks the called URL's query string: mismatch.", weatherURL, "https://api.forecast.example/v1/weather", weatherURL)
	resourceCase("check-resource-percent-encoding", "R2: percent-encoding is not normalised: mismatch.", "https://seller.example/api/paid%20item", "https://seller.example/api/paid item", "https://seller.example/api/paid%20item")
	resourceCase("check-resource-scheme", "R2: http vs https is a mismatch.", seller, "http://seller.example/api/paid", seller)
	resourceCase("check-resource-relative", "R2: a relative resource path is not the called URL: mismatch.", seller, "/api/paid", "/api/paid")
	{
		b, h := fleet()
		put(b, "accepts.0.resource", obj("url", "https://seller.example/api/other"))
		g.check("check-unconfigured-body-resource-object-url-differs", "R1 (corrected, issue 11): a body resource object is absent, so its differing url is not read; the header resource equals the URL: UNCONFIGURED.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(h, "resource")
		put(h, "accepts.0.resource", "https://seller.example/api/other")
		g.check("check-populated-header-accepts-resource-string-not-read", "R1 (corrected, issue 11): the header leg reads resource.url; a string accepts[0].resource (no url) with no top-level resource carries no header resource, and the body resource equals the URL.", seller, resp(402, h, b))
	}
	{
		b, h := fleet()
		drop(b, "accepts.0.resource")
		put(h, "resource.url", "https://seller.example/api/other")
		g.check("check-resource-mismatch-header-only", "state_rule (2): only the header carries a resource and it differs.", seller, resp(402, h, b))
	}
	{
		b, _ := fleet()
		put(b, "accepts.0.resource", "https://seller.example/api/other")
		g.check("check-resource-mismatch-header-absent", "state_rule (2) precedes (3): body resource mismatch with no header.", seller, resp(402, nil, b))
	}
	{
		b, h := fleet()
		put(b, "accepts.0.resource", "https://seller.example/api/other")
		g.check("check-resource-mismatch-header-undecodable", "state_rule (2) precedes (3): body resource mismatch with a URL-safe (undecodable) header.", seller, resp(402, urlSafeHeader(h), b))
	}
	{
		b, h := fleet()
		put(h, "resource.url", "https://seller.example/api/other")
		g.check("check-resource-undecodable-header-not-read", "R11: an undecodable header carries nothing, its differing resource included: HEADER-MISSING, not RESOURCE-MISMATCH.", seller, resp(402, urlSafeHeader(h), b))
	}
	{
		_, h := fleet()
		put(h, "resource.url", "https://seller.example/api/other")
		g.check("check-resource-mismatch-body-not-json", "state_rule (2) precedes (5): an unparseable body with a mismatched header resource.", seller, resp(402, h, "Payment Required"))
	}
	{
		b, h := amountsOnly()
		put(b, "accepts.0.resource", "https://seller.example/api/other")
		g.check("check-resource-mismatch-amounts-only-shape", "state_rule (2) precedes (4): an amounts-only challenge with a mismatched resource.", seller, resp(402, h, b))
	}

	// ---- (1) NOT-A-402 ----------------------------------------------------
	g.check("check-not-a-402-fetch-failed", "state_rule (1) / R19: the fetch failed: reason fetch_failed, status null, every other factor null (R11).", seller, failed())
	g.check("check-not-a-402-timeout", "state_rule (1) / R8: the fetch timed out: reason timeout, status null.", seller, timeout())
	{
		c := timeout()
		c.Status = ptr(402)
		c.Headers = map[string]string{"payment-required": b64(fleetHeader(seller, memoA))}
		g.check("check-not-a-402-timeout-after-status-line", "R27: a body that trickles past 5 s after a 402 status line is a timeout; a timed-out fetch has no status (null).", seller, c)
	}
	g.check("check-not-a-402-status-200", "state_rule (1): status 200 (a free endpoint): status_not_402, status 200.", seller, resp(200, nil, obj("city", "Oslo", "forecast", "rain")))
	g.check("check-not-a-402-status-200-challenge-shaped", "state_rule (1): a full challenge served with status 200 is not a 402.", seller, resp(200, fleetHeader(seller, memoA), fleetBody(seller, memoA)))
	{
		b, h := fleet()
		put(b, "accepts.0.resource", "https://seller.example/api/other")
		put(h, "resource.url", "https://seller.example/api/other")
		g.check("check-not-a-402-status-200-resource-mismatch", "state_rule (1) precedes (2): a 200 whose challenge resource differs is NOT-A-402.", seller, resp(200, h, b))
	}
	g.check("check-not-a-402-status-204", "state_rule (1): 204 No Content.", seller, resp(204, nil, nil))
	g.check("check-not-a-402-redirect-302-same-host", "target_safety: a same-host redirect is not followed; the 3xx is the capture.", seller, resp(302, nil, nil, "location", "/login?next=%2Fapi%2Fpaid"))
	g.check("check-not-a-402-redirect-301-off-host", "target_safety: an off-host redirect is not followed; the 3xx is the capture.", seller, resp(301, nil, "<a href=\"https://www.seller.example/api/paid\">Moved Permanently</a>.", "location", "https://www.seller.example/api/paid"))
	g.check("check-not-a-402-redirect-307-to-challenge", "target_safety: a redirect carrying a challenge header is still a 3xx.", seller, resp(307, fleetHeader(seller, memoA), nil, "location", "https://pay.seller.example/api/paid"))
	g.check("check-not-a-402-status-401", "state_rule (1): 401 Unauthorized.", seller, resp(401, nil, obj("error", "unauthorized"), "www-authenticate", "Bearer"))
	g.check("check-not-a-402-status-403", "state_rule (1): 403 Forbidden (a WAF page).", seller, resp(403, nil, "<html><body>Access denied</body></html>"))
	g.check("check-not-a-402-status-404", "state_rule (1): 404 Not Found.", seller, resp(404, nil, "404 page not found", "content-type", "text/plain; charset=utf-8"))
	g.check("check-not-a-402-status-405", "state_rule (1): 405 for GET on a POST-only route.", seller, resp(405, nil, obj("error", "method not allowed"), "allow", "POST"))
	g.check("check-not-a-402-status-429", "state_rule (1): 429 rate limited.", seller, resp(429, nil, obj("error", "rate limited"), "retry-after", "30"))
	g.check("check-not-a-402-status-500", "state_rule (1): 500 Internal Server Error.", seller, resp(500, nil, "Internal Server Error", "content-type", "text/plain"))
	g.check("check-not-a-402-status-500-challenge-shaped", "state_rule (1): a challenge sent with 500 is not a 402.", seller, resp(500, fleetHeader(seller, memoA), fleetBody(seller, memoA)))
	g.check("check-not-a-402-status-503", "state_rule (1): 503 Service Unavailable.", seller, resp(503, nil, nil, "retry-after", "120"))
	g.check("check-not-a-402-over-cap", "state_rule (1) / R7: a 402 whose body ran past 65,536 bytes: body_over_cap, status 402.", seller, overCap(fleet402(seller, memoA)))
	{
		body := padTo(enc(fleetBody(seller, memoA)), 65537)
		g.check("check-body-65537", "R7: a 402 body of 65,537 bytes is over the cap even though the capture says ok.", seller, resp(402, fleetHeader(seller, memoA), body))
	}
	g.check("check-not-a-402-over-cap-status-200", "R19: reason order — a 200 over the cap is status_not_402, not body_over_cap.", seller, overCap(resp(200, nil, "x")))
	g.check("check-not-a-402-over-cap-status-302", "R19: reason order — an over-cap 302 is status_not_402.", seller, overCap(resp(302, nil, "x", "location", "/elsewhere")))
	g.check("check-not-a-402-over-cap-header-ok", "state_rule (1) precedes everything: a decodable header does not rescue an over-cap 402.", seller, overCap(resp(402, fleetHeader(seller, memoA), "x")))
}
