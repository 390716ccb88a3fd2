package main

import "strings"

// memoCases builds the synthetic memo-op cases: every state and completion
// rule, every format and freshness class, the census, and the per-fetch nulls.
func memoCases(g *gen) {
	// pair returns two fleet challenges carrying the given memos on both legs.
	pair := func(m1, m2 string) (Capture, Capture) { return fleet402(seller, m1), fleet402(seller, m2) }
	// legs builds one 402 with separately chosen body and header memos; ""
	// leaves the leg's memo out (extra.memo and the top-level memo for the
	// body, extra.memo for the header).
	legs := func(bodyMemo, headerMemo string) Capture {
		b, h := fleetBody(seller, bodyMemo), fleetHeader(seller, headerMemo)
		if bodyMemo == "" {
			drop(b, "accepts.0.extra.memo")
			drop(b, "memo")
		}
		if headerMemo == "" {
			drop(h, "accepts.0.extra.memo")
		}
		return resp(402, h, b)
	}

	// ---- (5) BOUND --------------------------------------------------------
	{
		c1, c2 := pair(memoA, memoB)
		g.memo("memo-bound-fleet", "memo_op (5) BOUND: fresh, unique, leg-consistent memos in both fetches (pv- prefixed-opaque).", seller, c1, c2)
	}
	{
		b1, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		b2, h2 := fleetBody(seller, memoB), fleetHeader(seller, memoB)
		drop(b1, "accepts.0.extra.memo")
		drop(b2, "accepts.0.extra.memo")
		g.memo("memo-bound-top-level-fallback", "memo_op.field_rule / R15: the body memo falls back to the top-level memo in both fetches; the census has no memo name on the body leg.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		b1, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		b2, h2 := fleetBody(seller, memoB), fleetHeader(seller, memoB)
		put(b1, "accepts.0.extra.memo", "")
		put(b2, "accepts.0.extra.memo", "")
		g.memo("memo-bound-extra-memo-empty-falls-back", "R15: empty extra.memo falls back to the top-level memo in both fetches.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		c1, c2 := pair("9f86d081884c7d659a2feaa0c55ad015", "a3f390d88e4c41f2747bfa2f1b5f87db")
		g.memo("memo-bound-opaque-hex", "format_rule: 32 hex characters with no separator are opaque; BOUND does not depend on the format class.", seller, c1, c2)
	}
	{
		c1, c2 := pair("3f2a9c1e-7b4d-4e8a-9c21-5d6f7a8b9c0d", "d41d8cd9-8f00-4b20-9e98-0998ecf8427e")
		g.memo("memo-bound-uuid-digit-vs-letter", "format_rule: a UUID starting with a digit is opaque; one starting with a letter (prefix d41d8cd9) is prefixed-opaque.", seller, c1, c2)
	}
	{
		c1, c2 := pair("a1b2c3", "d4e5f6")
		g.memo("memo-bound-short", "format_rule: 6-character memos are short; they are still unique and leg-consistent, so BOUND.", seller, c1, c2)
	}
	{
		body := padTo(enc(fleetBody(seller, memoB)), 65536)
		g.memo("memo-bound-body-65536", "R7: a fetch whose body is exactly 65,536 bytes is within the cap and read.", seller, fleet402(seller, memoA), resp(402, fleetHeader(seller, memoB), body))
	}
	{
		b1, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		put(b1, "accepts.0.maxTimeoutSeconds", raw("1e400"))
		b2, h2 := fleetBody(seller, memoB), fleetHeader(seller, memoB)
		put(h2, "accepts.0.maxTimeoutSeconds", raw("1e400"))
		g.memo("memo-bound-number-beyond-float64", "R17 applied per fetch: 1e400 in fetch 1's body and fetch 2's header leaves both legs read; the census names the field.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		b1 := fleetBody(seller, memoA)
		b2 := fleetBody(seller, memoB)
		at(b1, "accepts.0").set("Memo", "x").set("X-Request-Id", "r1")
		at(b1, "accepts.0.extra").set("mémo", "y").set("memo_hint", "z").set("Nonce", "n1")
		at(b2, "accepts.0").set("memo", memoB)
		g.memo("memo-bound-census-byte-order", "R24: census names are sorted in byte order (upper case before lower case, non-ASCII last) and de-duplicated (memo in accepts[0] and in extra).", seller,
			resp(402, fleetHeader(seller, memoA), b1), resp(402, fleetHeader(seller, memoB), b2))
	}
	{
		// A 10 kB key name of the seller's choosing, in accepts[0] and in
		// extra on both legs of both fetches: counted, never written out.
		canary := "canary-" + strings.Repeat("K", 10<<10)
		var cs [2]Capture
		for i, m := range []string{memoA, memoB} {
			b, h := fleetBody(seller, m), fleetHeader(seller, m)
			for _, o := range []*O{b, h} {
				at(o, "accepts.0").set(canary, 1)
				at(o, "accepts.0.extra").set(canary, 2).set("nonce", "n1")
			}
			cs[i] = resp(402, h, b)
		}
		g.memo("memo-bound-census-unlisted-canary", "R24 (issue 20): a 10 kB seller-chosen key name (in accepts[0] and extra, same name, one union) and nonce are unlisted: counted (2 per leg), never written out.", seller, cs[0], cs[1])
	}
	{
		b1, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		b2, h2 := fleetBody(seller, memoB), fleetHeader(seller, memoB)
		put(b1, "accepts.0.extra", obj("usdc_token_account", tokenAccount, "memo", memoA))
		put(b2, "accepts", []any{at(b2, "accepts.0"), fleetAccept(seller, memoC)})
		put(h2, "accepts", []any{at(h2, "accepts.0"), obj("scheme", "exact", "extra", obj("memo", memoC, "other", "x"))})
		g.memo("memo-bound-second-accept-ignored", "memo_op.field_rule: only accepts[0] is read and censused.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}

	// Format classes (format_rule, R23), each pinned in a BOUND pair so the
	// state stays fixed while the class varies.
	for _, f := range []struct{ id, m1, m2, note string }{
		{"memo-format-7-vs-8", "pv-abcd", "pv-abcde", "format_rule: 7 characters is short; 8 characters with prefix pv is prefixed-opaque."},
		{"memo-format-prefix-1-vs-2", "p-abcdefgh", "pv-abcdefg", "format_rule: a 1-character prefix is opaque; a 2-character prefix is prefixed-opaque."},
		{"memo-format-8-prefix-1", "a-bcdefg", "ab-cdefg", "format_rule: at exactly 8 characters, prefix a (1) is opaque and prefix ab (2) is prefixed-opaque."},
		{"memo-format-underscore-vs-hyphen", "pv_3f9a1c7e", "pv-3f9a1c7e", "format_rule: _ and - are both separators."},
		{"memo-format-digit-start", "1v-abcdefgh", "v1-abcdefgh", "format_rule: a memo must start with a letter to be prefixed-opaque; a letter-digit prefix is fine."},
		{"memo-format-non-ascii", "pv-ääääää", "pvé-abcdef", "format_rule / R23: non-ASCII characters fail the ASCII pattern: opaque (9 and 10 code points)."},
		{"memo-format-non-ascii-short", "äääääää", "ääääääää", "R23: 7 code points (14 bytes) is short; 8 code points is opaque."},
		{"memo-format-emoji-short", "pv-🌦🌦🌦", "pv-🌦🌦🌦🌦🌦", "R23: 6 code points (15 bytes) is short; 8 code points with emoji is opaque."},
		{"memo-format-separator-last", "pvabcdefg-", "pv-------", "format_rule: a separator with nothing after it is opaque; separators after the first count as tail characters."},
		{"memo-format-space-and-dot", "pv-abc def", "pv.abcdefg", "format_rule: a space or a dot fails the pattern: opaque."},
		{"memo-format-upper-case", "PV-ABCDEFG", "Pv_0000000", "format_rule: letters of either case match."},
		{"memo-format-no-separator", "pvabcdefgh", "PVABCDEFGH", "format_rule: no separator at all is opaque."},
		{"memo-format-prefix-separator-first", "-pvabcdefg", "_pvabcdefg", "format_rule: a leading separator (empty prefix) is opaque."},
		{"memo-format-one-char", "x", "y", "format_rule: 1-character memos are short."},
	} {
		c1, c2 := pair(f.m1, f.m2)
		g.memo(f.id, f.note, seller, c1, c2)
	}
	{
		c1, c2 := legs(memoA, "pv-ab"), legs(memoB, "pv-ab")
		g.memo("memo-format-header-short-static", "format_rule per leg: header memos short and identical (static) while the body memos regenerate; leg equality fails: LEG-MISMATCH.", seller, c1, c2)
	}

	// ---- (4) MEMO-REUSED --------------------------------------------------
	{
		c1, c2 := pair(memoA, memoA)
		g.memo("memo-reused-static", "memo_op (4) MEMO-REUSED: identical memos in both fetches; freshness static on both legs, uniqueness false.", seller, c1, c2)
	}
	{
		b1, h1 := fleetBody(seller, "static-memo-0001"), fleetHeader(seller, "static-memo-0001")
		b2, h2 := fleetBody(seller, "static-memo-0001"), fleetHeader(seller, "static-memo-0001")
		drop(b1, "accepts.0.extra.memo")
		drop(b2, "accepts.0.extra.memo")
		g.memo("memo-reused-top-level", "memo_op (4) through the top-level memo fallback.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		c1, c2 := pair("abc", "abc")
		g.memo("memo-reused-short", "memo_op (4): a short static memo.", seller, c1, c2)
	}

	// ---- (3) LEG-MISMATCH -------------------------------------------------
	g.memo("memo-leg-mismatch-fetch1-differs", "memo_op (3): header and body memos differ in fetch 1.", seller, legs(memoA, memoC), legs(memoB, memoB))
	g.memo("memo-leg-mismatch-fetch2-differs", "memo_op (3): header and body memos differ in fetch 2.", seller, legs(memoA, memoA), legs(memoB, memoC))
	g.memo("memo-leg-mismatch-reused-and-differs", "memo_op (3) precedes (4): body memos are identical (reused) and a header memo differs: LEG-MISMATCH.", seller, legs(memoA, memoA), legs(memoA, memoB))
	g.memo("memo-leg-mismatch-header-memo-absent", "A1 equality: the body carries a memo and the header extra does not: false.", seller, legs(memoA, memoA), legs(memoB, ""))
	g.memo("memo-leg-mismatch-one-fetch-header-only", "memo_op (3) precedes completion rule 1: fetch 2's body has no memo but its header does (equality false).", seller, legs(memoA, memoA), legs("", memoB))
	{
		c2 := legs(memoB, memoB)
		delete(c2.Headers, "payment-required")
		g.memo("memo-leg-mismatch-header-absent", "R11: fetch 2 has no PAYMENT-REQUIRED header; its body memo alone makes equality false. Census header null.", seller, legs(memoA, memoA), c2)
	}
	{
		c1, c2 := pair(memoA, memoB)
		c2.Headers["payment-required"] = urlSafeHeader(fleetHeader(seller, memoB))
		g.memo("memo-leg-mismatch-header-urlsafe", "R4: fetch 2's URL-safe base64 header is undecodable; header memo absent, equality false.", seller, c1, c2)
	}
	{
		b1, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		b2, h2 := fleetBody(seller, memoB), fleetHeader(seller, memoB)
		put(h2, "accepts", []any{})
		g.memo("memo-leg-mismatch-header-accepts-empty", "R5 (header leg): empty header accepts carries no memo; census header [] (read, no accepts[0]).", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		b1, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		b2, h2 := fleetBody(seller, memoB), fleetHeader(seller, memoB)
		put(h2, "accepts.0.extra", memoB)
		g.memo("memo-leg-mismatch-header-extra-not-object", "field_rule: a header extra that is not an object carries no memo.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		b1, b2 := fleetBody(seller, memoA), fleetBody(seller, memoB)
		g.memo("memo-leg-mismatch-v1-only", "R11: a v1-only seller (no header in either fetch) carries body memos only; equality false in both: LEG-MISMATCH.", seller, resp(402, nil, b1), resp(402, nil, b2))
	}
	{
		_, h1 := fleetBody(seller, memoA), fleetHeader(seller, memoA)
		g.memo("memo-leg-mismatch-body-html", "R17: fetch 1's HTML body does not parse (no body memo) while its header carries one; fetch 2 has a body memo, so (2) does not match and (3) does.", seller,
			resp(402, h1, "<html><body>Payment Required</body></html>"), fleet402(seller, memoB))
	}

	// ---- (2) MEMO-ABSENT and completion rule 1 ----------------------------
	g.memo("memo-absent-both", "memo_op (2): no memo anywhere in either fetch; equalities null; freshness not_gradable; formats absent.", seller, legs("", ""), legs("", ""))
	g.memo("memo-absent-both-header-present", "memo_op (2) precedes (3): the body leg carries no memo in either fetch, though the headers do (equality false).", seller, legs("", memoA), legs("", memoB))
	{
		b1, h1 := fleetBody(seller, ""), fleetHeader(seller, "")
		b2, h2 := fleetBody(seller, ""), fleetHeader(seller, "")
		g.memo("memo-absent-empty-strings", "R3: empty-string memos on every leg are absent.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	{
		g.memo("memo-absent-v2-header-only", "R24/memo_op (2): a v2 header-only seller (body {}) carries no body memo; census body [] (read, no accepts[0]).", seller,
			resp(402, fleetHeader(seller, memoA), obj()), resp(402, fleetHeader(seller, memoB), obj()))
	}
	{
		g.memo("memo-absent-v2-header-only-empty-body", "R24: an empty body is not parseable: census body null; header memos regenerate.", seller,
			resp(402, fleetHeader(seller, memoA), nil), resp(402, fleetHeader(seller, memoB), nil))
	}
	{
		b1, b2 := fleetBody(seller, memoA), fleetBody(seller, memoB)
		put(b1, "accepts", []any{})
		put(b2, "accepts", []any{})
		g.memo("memo-bound-accepts-empty-top-level-memo", "R5 (corrected, issue 11): the memo field rule falls back to the body's top-level memo whether or not accepts[0] exists; {accepts: [], memo} carries a body memo, equal to the header memo and fresh: BOUND.", seller, resp(402, fleetHeader(seller, memoA), b1), resp(402, fleetHeader(seller, memoB), b2))
	}
	{
		b1, b2 := obj("x402Version", 1, "memo", memoA), obj("x402Version", 1, "memo", memoB)
		g.memo("memo-bound-no-accepts-top-level-memo", "R5 (corrected, issue 11): a body with no accepts at all and a top-level memo carries a body memo; census body [] (read, no accepts[0]).", seller, resp(402, fleetHeader(seller, memoA), b1), resp(402, fleetHeader(seller, memoB), b2))
	}
	{
		b1, b2 := fleetBody(seller, memoA), fleetBody(seller, memoA)
		put(b1, "accepts", []any{})
		put(b2, "accepts", []any{})
		g.memo("memo-reused-accepts-empty-top-level-memo", "R5 (corrected, issue 11): the same top-level memo in both fetches with empty accepts is a reused body memo.", seller, resp(402, fleetHeader(seller, memoA), b1), resp(402, fleetHeader(seller, memoA), b2))
	}
	{
		b1, b2 := fleetBody(seller, memoA), fleetBody(seller, memoB)
		g.memo("memo-leg-mismatch-header-json-array", "R4 (corrected, issue 11): fetch 2's header is base64 of a JSON array: decodable (header_decodable true), but it carries no memo, so equality is false; census header null (not an object, as for a body, R24).", seller,
			resp(402, fleetHeader(seller, memoA), b1), resp(402, b64([]any{fleetHeader(seller, memoB)}), b2))
	}
	{
		b1, b2 := fleetBody(seller, memoA), fleetBody(seller, memoB)
		g.memo("memo-absent-body-json-array", "R24: a JSON array body parses (body_parseable true) but is not an object: census body null, no body memo.", seller,
			resp(402, fleetHeader(seller, memoA), []any{b1}), resp(402, fleetHeader(seller, memoB), []any{b2}))
	}
	{
		b1, b2 := fleetBody(seller, memoA), fleetBody(seller, memoB)
		put(b1, "accepts.0.extra.memo", 4711)
		put(b1, "memo", 4711)
		put(b2, "accepts.0.extra.memo", 4712)
		put(b2, "memo", 4712)
		h1, h2 := fleetHeader(seller, memoA), fleetHeader(seller, memoB)
		put(h1, "accepts.0.extra.memo", 4711)
		put(h2, "accepts.0.extra.memo", 4712)
		g.memo("memo-absent-number-typed", "R3: number-typed memos are absent on both legs.", seller, resp(402, h1, b1), resp(402, h2, b2))
	}
	g.memo("memo-absent-one-fetch-first", "Completion rule 1: the body memo is present in fetch 1 only and fetch 2 carries no memo on either leg (equality null): MEMO-ABSENT, memo_absent_one_fetch.", seller, legs(memoA, memoA), legs("", ""))
	g.memo("memo-absent-one-fetch-second", "Completion rule 1 with the memo in fetch 2 only.", seller, legs("", ""), legs(memoB, memoB))
	{
		c2 := legs("", memoB)
		c2.Headers["payment-required"] = urlSafeHeader(drop(fleetHeader(seller, memoB), "accepts.0.extra.memo"))
		g.memo("memo-absent-one-fetch-header-undecodable", "Completion rule 1: fetch 2's header is undecodable (carries nothing) and its body has no memo: equality null there.", seller, legs(memoA, memoA), c2)
	}

	// ---- (1) NOT-A-402 ----------------------------------------------------
	g.memo("memo-not-a-402-fetch1-failed", "memo_op (1) / R20: fetch 1 failed; fetch 2 is still sent and reported. R22: a failed fetch has fetch_ok false and every other factor null.", seller, failed(), fleet402(seller, memoB))
	g.memo("memo-not-a-402-fetch2-failed", "memo_op (1): fetch 2 failed.", seller, fleet402(seller, memoA), failed())
	g.memo("memo-not-a-402-fetch1-timeout", "memo_op (1): fetch 1 timed out.", seller, timeout(), fleet402(seller, memoB))
	g.memo("memo-not-a-402-both-failed", "memo_op (1): both fetches failed (unreachable endpoint).", seller, failed(), failed())
	{
		c := timeout()
		c.Status = ptr(402)
		g.memo("memo-not-a-402-timeout-after-status-line", "R27: a fetch that timed out after its status line has no status (null).", seller, fleet402(seller, memoA), c)
	}
	g.memo("memo-not-a-402-fetch2-200", "memo_op (1): fetch 2 answered 200 (fetch_ok true, is_402 false, body_over_cap false, the rest null).", seller, fleet402(seller, memoA), resp(200, nil, obj("city", "Oslo")))
	g.memo("memo-not-a-402-fetch2-200-challenge-shaped", "memo_op (1): fetch 2 served a full challenge with status 200; it is not read.", seller, fleet402(seller, memoA), resp(200, fleetHeader(seller, memoB), fleetBody(seller, memoB)))
	g.memo("memo-not-a-402-fetch1-500", "memo_op (1): fetch 1 answered 500.", seller, resp(500, nil, "upstream error", "content-type", "text/plain"), fleet402(seller, memoB))
	g.memo("memo-not-a-402-fetch1-302", "target_safety: fetch 1 is a redirect, not followed.", seller, resp(302, nil, nil, "location", "https://login.seller.example/"), fleet402(seller, memoB))
	g.memo("memo-not-a-402-fetch1-over-cap", "memo_op (1) / R22: fetch 1's body ran past the cap: fetch_ok true, status 402, is_402 true, body_over_cap true, the rest null.", seller, overCap(fleet402(seller, memoA)), fleet402(seller, memoB))
	{
		body := padTo(enc(fleetBody(seller, memoB)), 65537)
		g.memo("memo-not-a-402-fetch2-body-65537", "R7/R28: fetch 2's body of 65,537 bytes is over the cap though the capture says ok: body_over_cap true.", seller, fleet402(seller, memoA), resp(402, fleetHeader(seller, memoB), body))
	}
	g.memo("memo-not-a-402-fetch2-200-over-cap", "R28: a 200 over the cap reports body_over_cap true (the observation) and is_402 false.", seller, fleet402(seller, memoA), overCap(resp(200, nil, "x")))
	g.memo("memo-not-a-402-fetch2-503", "memo_op (1): fetch 2 answered 503; fetch 1 is graded and reported, fetch 2 only by status.", seller, fleet402(seller, memoA), resp(503, nil, nil, "retry-after", "5"))
}
