package preflight

import "strings"

// reasonSentences are the static sentences of the reason codes.
var reasonSentences = map[Reason]string{
	ReasonUnreachable:        "the gated method's unpaid request got no response",
	ReasonNot402:             "the gated method never answered 402",
	ReasonNoPayableEntry:     "no entry a standard client can read is free of lint errors and matches the options",
	ReasonOverBudget:         "every matching entry costs more than --max-amount",
	ReasonFailOpen:           "a payment probe that cannot pay got a 2xx: the seller serves without a valid payment",
	ReasonResourceMismatch:   "lint found an error on the resource the challenge states",
	ReasonPaymentNotVerified: "the seller never showed that it rejects an invalid payment",
	ReasonNotVerifiedV2:      "the seller also takes v2 payments (PAYMENT-SIGNATURE) and never showed that it rejects an invalid one there",
	ReasonNotVerifiedV1:      "the seller also takes v1 payments (X-PAYMENT) and never showed that it rejects an invalid one there",
	ReasonChallengeStatic:    "the memo or nonce was not shown to change between two fetches",
	ReasonMethodOpen:         "HEAD or the other method answered 2xx without payment",
	ReasonLintWarnings:       "lint warned about the selected entry",
	ReasonSchemeNotProbed:    "the selected entry's scheme or network has no structural probe",
	ReasonCortxUnfavourable:  "the CORTX reliability decision is not favourable",
	ReasonCortxUnverified:    "the CORTX reliability record could not be verified",
}

// Sentence is a reason's static sentence.
func (r Reason) Sentence() string { return reasonSentences[r] }

// GoSentence is the sentence of a GO, at the check-end time.
func GoSentence(at string) string {
	return strings.Replace(doc().Decision.GoSentence, "{checked_at}", at, 1)
}

// Summary is the one line a person reads first.
func Summary(r Result, at string) string {
	codes := make([]string, len(r.Reasons))
	for i, c := range r.Reasons {
		codes[i] = string(c)
	}
	switch r.Decision {
	case Go:
		return "GO: " + GoSentence(at)
	case Hold:
		return "HOLD: ask a human before paying (" + strings.Join(codes, ", ") + ")"
	}
	return "STOP: do not pay (" + strings.Join(codes, ", ") + ")"
}
