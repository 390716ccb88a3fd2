package main

// probeCases builds the synthetic probe-op cases: every grade rule in order
// (also where two rules match), NOT-PROBED, the method matrix and exposures.
func probeCases(g *gen) {
	// Indices into the probe inventory.
	const (
		baseline = iota
		head
		post
		direct
		facilitator
		missingMemo
		bogus
	)
	gate := func(memo string) Capture { return fleet402(seller, memo) }
	reject := func(fields ...any) Capture {
		return resp(402, fleetHeader(seller, memoC), obj(fields...))
	}
	// closed is a gate that answers every probe with a clean rejection.
	closed := func() [7]Capture {
		return [7]Capture{
			gate(memoA),
			resp(402, fleetHeader(seller, memoB), nil),
			gate(memoC),
			reject("x402Version", 1, "error", "invalid_transaction", "detail", "X-Payment-Tx is not a confirmed transaction signature"),
			reject("x402Version", 2, "error", "invalid_exact_svm_payload_signature"),
			reject("error", "memo_required", "reason", "the payment carries no memo bound to a challenge"),
			reject("error", "invalid_payment_header"),
		}
	}
	// with returns closed() with some probes replaced.
	with := func(repl map[int]Capture) [7]Capture {
		cs := closed()
		for i, c := range repl {
			cs[i] = c
		}
		return cs
	}
	// one varies the direct probe only.
	one := func(id, note string, c Capture) { g.probe(id, note, seller, with(map[int]Capture{direct: c})) }

	// ---- rule (3) PRESENT-FAIL-CLOSED -------------------------------------
	g.probe("probe-all-closed", "grade_rule (3): every rail rejects its invalid probe with a 402 and a reason; GET/HEAD/POST gated; no exposures.", seller, closed())
	one("probe-closed-error-only", "grade_rule (3): a non-empty error string.", reject("error", "invalid payment"))
	one("probe-closed-reason-only", "grade_rule (3): a non-empty reason string.", reject("reason", "signature not found"))
	one("probe-closed-detail-only", "grade_rule (3) / R10: a body with only a non-empty detail string.", reject("detail", "Payment verification failed"))
	one("probe-closed-empty-error-reason-set", "R10: error is empty but reason is a non-empty string: rejected with a reason.", reject("error", "", "reason", "bad_signature"))
	one("probe-closed-whitespace-error", "R10: \" \" is a non-empty string.", reject("error", " "))
	one("probe-closed-number-beyond-float64", "grade_rule (3) / R17: a body holding 1e400 beside a non-empty error string is JSON-parseable: rejected with a reason.", reject("error", "invalid_payment", "retryAfterSeconds", raw("1e400")))
	one("probe-closed-x402-v1-reject-with-accepts", "grade_rule (3): an x402 v1 style rejection — the challenge again, with an error string.", resp(402, nil, obj("x402Version", 1, "error", "Invalid or malformed payment header", "accepts", []any{fleetAccept(seller, memoC)})))
	{
		b := padTo(enc(obj("error", "invalid_transaction", "accepts", []any{fleetAccept(seller, memoC)})), 65536)
		one("probe-closed-body-65536", "R7: a rejection body of exactly 65,536 bytes is within the cap and graded.", resp(402, nil, b))
	}

	// ---- rule (4) ABSENT --------------------------------------------------
	one("probe-absent-direct-plain-challenge", "grade_rule (4): the direct probe is answered with the plain gate challenge: payment_never_evaluated.", gate(memoC))
	g.probe("probe-absent-all-rails", "grade_rule (4): every probe is answered with the unpaid gate challenge; a seller that ignores payment headers it does not know.", seller,
		with(map[int]Capture{direct: gate("pv-d1"), facilitator: gate("pv-f1"), missingMemo: gate("pv-m1"), bogus: gate("pv-b1")}))
	one("probe-absent-number-beyond-float64", "grade_rule (4) / R17: a plain challenge holding 1e400 is JSON-parseable with no rejection reason: ABSENT.", resp(402, nil, obj("x402Version", 1, "maxTimeoutSeconds", raw("1e400"), "accepts", []any{})))
	one("probe-absent-json-array", "R10: a 402 JSON array body parses but is not an object: ABSENT.", resp(402, nil, []any{obj("error", "invalid payment")}))
	one("probe-absent-json-string", "R10: a 402 JSON string body is not an object: ABSENT.", resp(402, nil, `"invalid payment"`))
	one("probe-absent-json-null", "R10: a 402 JSON null body: ABSENT.", resp(402, nil, "null"))
	one("probe-absent-empty-reason-strings", "R10: error, reason and detail all empty strings: ABSENT.", reject("error", "", "reason", "", "detail", ""))
	one("probe-absent-non-string-error", "R10: a non-string error (an object) is no rejection reason: ABSENT.", reject("error", obj("code", "invalid_payment", "message", "bad signature")))
	one("probe-absent-error-null", "R10: error null: ABSENT.", reject("error", nil))
	one("probe-absent-error-number", "R10: a numeric error code is not a string: ABSENT.", reject("error", 4021))
	one("probe-absent-message-only", "R10: message is not one of error, reason, detail: ABSENT.", reject("message", "Payment required"))
	one("probe-absent-empty-object", "grade_rule (4): a v2 seller's 402 with body {} (the challenge is in the header only).", resp(402, fleetHeader(seller, memoC), obj()))
	one("probe-absent-nested-error", "R10: only top-level error/reason/detail are read; a nested error is not.", reject("x402Version", 2, "payload", obj("error", "invalid signature")))

	// ---- rule (5) PRESENT-FAIL-DIRTY, dirty_rejection ----------------------
	one("probe-dirty-500", "grade_rule (5): 500 to an invalid payment.", resp(500, nil, "Internal Server Error", "content-type", "text/plain"))
	one("probe-dirty-500-json-error", "grade_rule (5): a 500 with a JSON error is still \"any other status\".", resp(500, nil, obj("error", "verification failed")))
	one("probe-dirty-400-json-reason", "grade_rule (5): a 400 with a reason is not a 402: dirty.", resp(400, nil, obj("error", "invalid X-Payment-Tx")))
	one("probe-dirty-401", "grade_rule (5): 401.", resp(401, nil, obj("error", "unauthorized")))
	one("probe-dirty-403", "grade_rule (5): 403.", resp(403, nil, "Forbidden", "content-type", "text/plain"))
	one("probe-dirty-302", "grade_rule (5): a redirect is graded as received.", resp(302, nil, nil, "location", "/checkout"))
	one("probe-dirty-300", "grade_rule (2)/(5) edge: 300 is outside 200-299: dirty, not fail-open.", resp(300, nil, nil))
	one("probe-dirty-402-html", "grade_rule (5): an HTML 402 body is unparseable.", resp(402, nil, "<html><body><h1>402</h1><p>invalid payment</p></body></html>"))
	one("probe-dirty-402-empty-body", "R10: an empty 402 body does not parse: dirty.", resp(402, fleetHeader(seller, memoC), nil))
	one("probe-dirty-402-text", "grade_rule (5): a plain-text 402 with a reason in words is still non-JSON.", resp(402, nil, "invalid payment: signature not found", "content-type", "text/plain"))
	one("probe-dirty-402-trailing-garbage", "R17: JSON followed by garbage does not parse: dirty.", resp(402, nil, `{"error":"invalid payment"} <!-- -->`))
	one("probe-dirty-402-gzip", "R7: a gzip body is never decompressed and does not parse: dirty.", resp(402, nil, gzipped(enc(obj("error", "invalid payment"))), "content-encoding", "gzip", "content-type", "application/json"))
	g.probe("probe-dirty-post-404", "grade_rule (5): a GET-only route answers every POST with 404; POST matrix ungated.", seller,
		with(map[int]Capture{post: resp(404, nil, "Not Found"), direct: resp(404, nil, "Not Found"), facilitator: resp(404, nil, "Not Found"), missingMemo: resp(404, nil, "Not Found"), bogus: resp(404, nil, "Not Found")}))
	g.probe("probe-dirty-post-405", "grade_rule (5): 405 Method Not Allowed to every POST.", seller,
		with(map[int]Capture{post: resp(405, nil, obj("error", "method not allowed"), "allow", "GET"), direct: resp(405, nil, obj("error", "method not allowed"), "allow", "GET"),
			facilitator: resp(405, nil, obj("error", "method not allowed"), "allow", "GET"), missingMemo: resp(405, nil, obj("error", "method not allowed"), "allow", "GET"),
			bogus: resp(405, nil, obj("error", "method not allowed"), "allow", "GET")}))

	// ---- rule (2) PRESENT-FAIL-DIRTY, fail_open_2xx -------------------------
	served := func() Capture { return resp(200, nil, obj("city", "Oslo", "forecast", "rain", "temperature_c", 7)) }
	one("probe-fail-open-direct", "grade_rule (2): the direct probe is answered 200: FAIL-OPEN:direct.", served())
	g.probe("probe-fail-open-facilitator", "grade_rule (2): FAIL-OPEN:facilitator.", seller, with(map[int]Capture{facilitator: served()}))
	g.probe("probe-fail-open-missing-memo", "grade_rule (2): FAIL-OPEN:missing_memo (the gate accepted a payment without a memo).", seller, with(map[int]Capture{missingMemo: served()}))
	g.probe("probe-fail-open-bogus", "grade_rule (2): FAIL-OPEN:bogus (any X-PAYMENT value passes the gate).", seller, with(map[int]Capture{bogus: served()}))
	g.probe("probe-fail-open-all-four", "grade_rule (2) on every graded probe; exposures in inventory order.", seller,
		with(map[int]Capture{direct: served(), facilitator: served(), missingMemo: served(), bogus: served()}))
	one("probe-fail-open-204", "grade_rule (2): 204 is in 200-299.", resp(204, nil, nil))
	one("probe-fail-open-299", "grade_rule (2): 299 is the upper edge.", resp(299, nil, obj("ok", true)))
	one("probe-fail-open-200-with-error-body", "grade_rule (2) precedes (3): a 200 carrying an error string is still fail-open.", resp(200, nil, obj("error", "invalid payment")))

	// ---- rule (1) UNGRADED, probe_failed ----------------------------------
	one("probe-ungraded-direct-failed", "grade_rule (1): the direct probe failed (connection reset): UNGRADED, status null; the call is still PROBED.", failed())
	g.probe("probe-ungraded-facilitator-timeout", "grade_rule (1): the facilitator probe timed out.", seller, with(map[int]Capture{facilitator: timeout()}))
	{
		c := timeout()
		c.Status = ptr(200)
		g.probe("probe-ungraded-timeout-after-status-line", "R27: a probe that timed out after a 200 status line has no status: UNGRADED, not fail-open.", seller, with(map[int]Capture{missingMemo: c}))
	}
	g.probe("probe-ungraded-bogus-over-cap", "grade_rule (1): the bogus probe's body ran past the cap: UNGRADED with its status.", seller, with(map[int]Capture{bogus: overCap(reject("error", "x"))}))
	g.probe("probe-ungraded-over-cap-200-not-fail-open", "grade_rule (1) precedes (2): an over-cap 200 is UNGRADED, not FAIL-OPEN; no exposure.", seller, with(map[int]Capture{direct: overCap(served())}))
	{
		b := padTo(enc(obj("error", "invalid_transaction", "accepts", []any{fleetAccept(seller, memoC)})), 65537)
		one("probe-ungraded-body-65537", "R7/R28: a 65,537-byte body is over the cap though the capture says ok: UNGRADED, probe outcome over_cap.", resp(402, nil, b))
	}
	g.probe("probe-ungraded-all-four-failed", "grade_rule (1) for every graded probe while the baseline succeeded: PROBED with four UNGRADED.", seller,
		with(map[int]Capture{direct: failed(), facilitator: failed(), missingMemo: timeout(), bogus: failed()}))

	// ---- NOT-PROBED -------------------------------------------------------
	notProbed := func(c Capture) [7]Capture {
		return [7]Capture{c, notSent(), notSent(), notSent(), notSent(), notSent(), notSent()}
	}
	g.probe("probe-not-probed-baseline-failed", "grade_rule (1) / R9: the baseline GET failed: NOT-PROBED, every grade UNGRADED (baseline_failed), the six others not_sent with null statuses and matrix entries.", seller, notProbed(failed()))
	g.probe("probe-not-probed-baseline-timeout", "R9: the baseline GET timed out.", seller, notProbed(timeout()))
	g.probe("probe-not-probed-baseline-over-cap", "R9/R26: the baseline's body ran past the cap: NOT-PROBED; the GET entry keeps its status 402 (gated).", seller, notProbed(overCap(gate(memoA))))
	{
		b := padTo(enc(fleetBody(seller, memoA)), 65537)
		g.probe("probe-not-probed-baseline-body-65537", "R7/R28: a 65,537-byte baseline body is over the cap though the capture says ok: NOT-PROBED, baseline outcome over_cap.", seller, notProbed(resp(402, fleetHeader(seller, memoA), b)))
	}
	g.probe("probe-not-probed-baseline-over-cap-200", "R26: an over-cap baseline 200 still has a status: NOT-PROBED, yet GET answered 200 unpaid — METHOD-UNPAID-2XX:GET.", seller, notProbed(overCap(served())))
	{
		c := timeout()
		c.Status = ptr(402)
		g.probe("probe-not-probed-timeout-after-status-line", "R27: a baseline that timed out after its status line has no status.", seller, notProbed(c))
	}

	// ---- the method matrix and exposures ----------------------------------
	g.probe("probe-baseline-200-ungated", "method_rule: an ungated endpoint — GET answers 200 unpaid (METHOD-UNPAID-2XX:GET); the call is PROBED (the baseline did not fail) and every probe is fail-open.", seller,
		[7]Capture{served(), resp(200, nil, nil, "content-type", "application/json"), served(), served(), served(), served(), served()})
	g.probe("probe-baseline-500", "method_rule: the baseline GET answers 500; the call is still PROBED (only failure, timeout or over-cap stop it).", seller,
		[7]Capture{resp(500, nil, "error"), resp(500, nil, nil), resp(500, nil, "error"), resp(500, nil, "error"), resp(500, nil, "error"), resp(500, nil, "error"), resp(500, nil, "error")})
	g.probe("probe-baseline-302", "method_rule: the baseline GET is a redirect (not followed): PROBED, GET ungated.", seller,
		with(map[int]Capture{baseline: resp(302, nil, nil, "location", "https://www.seller.example/api/paid")}))
	g.probe("probe-head-200-exposure", "method_rule: HEAD answers 200 unpaid while GET is gated: METHOD-UNPAID-2XX:HEAD.", seller,
		with(map[int]Capture{head: resp(200, nil, nil, "content-type", "application/json", "content-length", "63")}))
	g.probe("probe-post-unpaid-200-exposure", "method_rule: POST with no payment answers 200: METHOD-UNPAID-2XX:POST.", seller, with(map[int]Capture{post: served()}))
	g.probe("probe-head-405", "method_rule: HEAD answers 405: not gated, not unpaid_2xx.", seller, with(map[int]Capture{head: resp(405, nil, nil, "allow", "GET, POST")}))
	g.probe("probe-head-failed", "R26: a HEAD that failed has null status, gated and unpaid_2xx.", seller, with(map[int]Capture{head: failed()}))
	g.probe("probe-post-timeout", "R26: a POST that timed out has a null matrix entry.", seller, with(map[int]Capture{post: timeout()}))
	g.probe("probe-post-over-cap-200", "R26: an over-cap POST response still has a status and is graded on it: METHOD-UNPAID-2XX:POST.", seller, with(map[int]Capture{post: overCap(served())}))
	g.probe("probe-exposure-order", "R26: exposures list methods in GET, HEAD, POST order, then probes in inventory order.", seller,
		with(map[int]Capture{head: resp(200, nil, nil), post: served(), direct: served(), bogus: resp(201, nil, obj("created", true))}))
	g.probe("probe-mixed-grades", "grade_rule applied per probe: direct CLOSED, facilitator ABSENT, missing_memo DIRTY, bogus UNGRADED.", seller,
		with(map[int]Capture{facilitator: gate(memoC), missingMemo: resp(500, nil, "error"), bogus: failed()}))
	g.probe("probe-v2-seller-rejects-in-header", "grade_rule (4): a v2 seller answering invalid payments with 402, body {} and the reason only in its PAYMENT-REQUIRED header: the body carries no reason, ABSENT.", seller,
		with(map[int]Capture{
			direct: resp(402, func() *O { h := fleetHeader(seller, memoC); put(h, "error", "invalid_payload"); return h }(), obj()),
			facilitator: resp(402, func() *O {
				h := fleetHeader(seller, memoC)
				put(h, "error", "invalid_exact_svm_payload_signature")
				return h
			}(), obj()),
			missingMemo: resp(402, fleetHeader(seller, memoC), obj()),
			bogus:       resp(402, func() *O { h := fleetHeader(seller, memoC); put(h, "error", "invalid_payment_header"); return h }(), obj()),
		}))
}
