package facilitator

import (
	"strings"

	"github.com/exchangerebel/payability/internal/gate"
)

// reasonRule classifies a facilitator's invalidReason (or errorReason) into
// one of our closed refusal codes. The facilitator's text is never carried:
// it names x402 reasons (insufficient_funds, invalid_network, the scheme's
// invalid_exact_svm_payload_* family, …), which are open-ended and, in some
// facilitators, carry free text after a colon.
type reasonRule struct {
	code gate.Code
	// match is a substring of the reason's name; first match wins.
	match string
}

// reasonRules is ordered: the first rule whose substring occurs wins.
var reasonRules = []reasonRule{
	{gate.CodePaymentAlreadyUsed, "duplicate"},     // duplicate_settlement
	{gate.CodePaymentAlreadyUsed, "already_used"},  // nonce_already_used
	{gate.CodeInsufficientFunds, "insufficient"},   // insufficient_funds
	{gate.CodeWrongNetwork, "network"},             // invalid_network, …_network_mismatch
	{gate.CodeWrongScheme, "scheme"},               // invalid_scheme, unsupported_scheme
	{gate.CodeMemoRejected, "memo"},                // …_memo_mismatch, …_memo_count
	{gate.CodeWrongAsset, "mint"},                  // …_mint_mismatch
	{gate.CodeWrongAsset, "asset"},                 // …_incorrect_asset
	{gate.CodeWrongRecipient, "recipient"},         // …_recipient_mismatch
	{gate.CodeWrongRecipient, "payee"},             // …_incorrect_payee
	{gate.CodeWrongAmount, "amount"},               // …_amount_mismatch
	{gate.CodeWrongAmount, "value"},                // …_authorization_value*
	{gate.CodeSignatureInvalid, "signature"},       // …_signature_invalid
	{gate.CodePaymentExpired, "valid_after"},       // EVM authorization windows
	{gate.CodePaymentExpired, "valid_before"},      //
	{gate.CodePaymentExpired, "expired"},           //
	{gate.CodePaymentExpired, "deadline"},          //
	{gate.CodeTxRejected, "simulation"},            // …_transaction_simulation_failed
	{gate.CodeTxRejected, "transaction_failed"},    // …_transaction_failed
	{gate.CodeTxRejected, "transaction_state"},     // invalid_transaction_state
	{gate.CodeTxRejected, "not_confirmed"},         // post_settlement_transfer_not_confirmed
	{gate.CodeVerifyRefused, "invalid_payload"},    // the generic one, named for clarity
	{gate.CodeVerifyRefused, "invalid_x402"},       // invalid_x402_version
	{gate.CodeVerifyRefused, "invalid_payment_re"}, // invalid_payment_requirements
}

// maxReason bounds the reason text we look at; a longer one is generic.
const maxReason = 200

// classify maps a facilitator reason to a refusal code; fallback when no
// rule matches.
func classify(reason string, fallback gate.Code) gate.Code {
	if len(reason) > maxReason {
		return fallback
	}
	name, _, _ := strings.Cut(reason, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return fallback
	}
	for _, r := range reasonRules {
		if strings.Contains(name, r.match) {
			return r.code
		}
	}
	return fallback
}

// reasonPending is the errorReason of a settlement the facilitator has
// broadcast but not yet confirmed; the same payload settles it later.
const reasonPending = "settlement_pending"
