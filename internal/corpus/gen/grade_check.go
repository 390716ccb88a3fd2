package main

import "unicode/utf8"

// CheckExpected is the check op's result object (docs/report-format.md).
type CheckExpected struct {
	State   string       `json:"state"`
	Factors CheckFactors `json:"factors"`
}

// CheckFactors: every field-check factor the criteria name, in snake_case.
type CheckFactors struct {
	HeaderPresent           *bool   `json:"header_present"`
	HeaderDecodable         *bool   `json:"header_decodable"`
	BodyParseable           *bool   `json:"body_parseable"`
	RecipientPresent        *bool   `json:"recipient_present"`
	TokenAccountPresent     *bool   `json:"token_account_present"`
	MemoPresent             *bool   `json:"memo_present"`
	AmountsPresent          *bool   `json:"amounts_present"`
	AmountsConsistent       *bool   `json:"amounts_consistent"`
	ResourcePresent         *bool   `json:"resource_present"`
	ResourceEqualsCalledURL *bool   `json:"resource_equals_called_url"`
	HeaderBodyMemoEqual     *bool   `json:"header_body_memo_equal"`
	HeaderBodyAmountEqual   *bool   `json:"header_body_amount_equal"`
	HeaderBodyPayToEqual    *bool   `json:"header_body_pay_to_equal"`
	DescriptionOverlong     *bool   `json:"description_overlong"`
	Reason                  *string `json:"reason"`
	Status                  *int    `json:"status"`
}

// descriptionThreshold: "description over 500 characters" (description_flag);
// R6: more than 500 Unicode code points.
const descriptionThreshold = 500

// gradeCheck grades one fetch of the called URL (payability/v1 state_rule).
func gradeCheck(url string, c Capture) CheckExpected {
	// state_rule (1) NOT-A-402 — "the fetch failed or timed out, the response
	// status is not 402, or the response body exceeded the 65,536-byte cap".
	// R19: the reason is the first of fetch_failed, timeout, status_not_402,
	// body_over_cap; status is set whenever a status line arrived. R11: every
	// other factor is null (the challenge was never read).
	var reason string
	switch {
	case c.Outcome == "timeout":
		reason = "timeout"
	case !c.responded():
		reason = "fetch_failed"
	case *c.Status != 402:
		reason = "status_not_402"
	case c.overCap():
		reason = "body_over_cap"
	}
	if reason != "" {
		return CheckExpected{State: "NOT-A-402", Factors: CheckFactors{Reason: &reason, Status: c.status()}}
	}

	ch := readChallenge(c)

	// field_rule, body leg: recipient = payTo; token account =
	// extra.usdc_token_account; memo = extra.memo (top-level fallback);
	// amounts = amount and maxAmountRequired; resource; description.
	payTo, payToOK := present(ch.bodyA0["payTo"])
	_, tokenOK := present(extra(ch.bodyA0)["usdc_token_account"])
	memo, memoOK := ch.bodyMemo()
	amount, amountOK := presentAmount(ch.bodyA0["amount"])
	maxAmount, maxOK := presentAmount(ch.bodyA0["maxAmountRequired"])
	bodyRes, bodyResOK := ch.bodyResource()
	desc, _ := ch.bodyA0["description"].(string)

	// field_rule, header leg: memo = extra.memo, amount, payTo, resource.url.
	// R11: an absent or undecodable header carries nothing (headerA0 is nil).
	hMemo, hMemoOK := ch.headerMemo()
	hAmount, hAmountOK := presentAmount(ch.headerA0["amount"])
	hPayTo, hPayToOK := present(ch.headerA0["payTo"])
	hRes := ch.headerResources()

	// "Amounts are mutually consistent when amount is present and
	// (maxAmountRequired is absent or equal to amount) and (the header amount
	// is absent or equal to the body amount)." R14: false when amount absent.
	consistent := amountOK && (!maxOK || maxAmount == amount) && (!hAmountOK || hAmount == amount)

	// R16: null when neither leg carries a resource; false when any carried
	// resource — the body's, and each of the header's (R1) — differs from the
	// called URL (R2: exact string equality).
	var resEq *bool
	if bodyResOK || len(hRes) > 0 {
		eq := !bodyResOK || bodyRes == url
		for _, r := range hRes {
			eq = eq && r == url
		}
		resEq = ptr(eq)
	}

	f := CheckFactors{
		HeaderPresent:           ptr(ch.headerPresent),
		HeaderDecodable:         ptr(ch.headerDecodable),
		BodyParseable:           ptr(ch.bodyParseable),
		RecipientPresent:        ptr(payToOK),
		TokenAccountPresent:     ptr(tokenOK),
		MemoPresent:             ptr(memoOK),
		AmountsPresent:          ptr(amountOK), // R14: the body amount
		AmountsConsistent:       ptr(consistent),
		ResourcePresent:         ptr(bodyResOK), // R13: core fields are body-leg fields
		ResourceEqualsCalledURL: resEq,
		HeaderBodyMemoEqual:     equality(memo, memoOK, hMemo, hMemoOK),
		HeaderBodyAmountEqual:   equality(amount, amountOK, hAmount, hAmountOK),
		HeaderBodyPayToEqual:    equality(payTo, payToOK, hPayTo, hPayToOK),
		// description_flag: "longer than 500 characters" — a factor only.
		DescriptionOverlong: ptr(utf8.RuneCountInString(desc) > descriptionThreshold),
		Status:              c.status(),
	}

	state := "POPULATED" // (6) "every field check passes"
	switch {
	// (2) RESOURCE-MISMATCH — "a resource field is present (challenge body
	// accepts[0].resource, or the decoded header's resource.url) and is not
	// equal to the called URL".
	case resEq != nil && !*resEq:
		state = "RESOURCE-MISMATCH"
	// (3) HEADER-MISSING — "the PAYMENT-REQUIRED header is absent or cannot be
	// base64/JSON decoded".
	case !ch.headerPresent || !ch.headerDecodable:
		state = "HEADER-MISSING"
	// (4) AMOUNTS-ONLY — "the amounts are present and mutually consistent, and
	// recipient, token account, and memo are ALL absent".
	case consistent && !payToOK && !tokenOK && !memoOK:
		state = "AMOUNTS-ONLY"
	// (5) UNCONFIGURED — "the amount is absent or mutually inconsistent, or any
	// core field (recipient, token account, memo, resource) is absent, or any
	// header-to-body equality check (memo, amount, payTo) fails, or a 402 body
	// cannot be JSON-decoded (with a decodable header present)".
	case !consistent || !payToOK || !tokenOK || !memoOK || !bodyResOK ||
		!isTrue(f.HeaderBodyMemoEqual) || !isTrue(f.HeaderBodyAmountEqual) || !isTrue(f.HeaderBodyPayToEqual) ||
		!ch.bodyParseable:
		state = "UNCONFIGURED"
	}
	return CheckExpected{State: state, Factors: f}
}

func isTrue(b *bool) bool { return b != nil && *b }
