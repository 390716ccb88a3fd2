package gate

// Code is a closed-form refusal reason. Each has one static sentence; neither
// ever carries request or fetched content, so both are safe in a response
// body, a log line or a metrics label.
type Code string

// Refusal codes of the payment gate.
const (
	CodePaymentMalformed   Code = "payment_malformed"
	CodeMemoMissing        Code = "memo_missing"
	CodeMemoInvalid        Code = "memo_invalid"
	CodeMemoWrongOp        Code = "memo_wrong_op"
	CodeMemoExpired        Code = "memo_expired"
	CodePaymentNotFound    Code = "payment_not_found"
	CodePaymentAlreadyUsed Code = "payment_already_used"
	CodeTxFailed           Code = "tx_failed"
	CodeAmountInsufficient Code = "amount_insufficient"
	CodeWrongMint          Code = "wrong_mint"
	CodeMemoNotInTx        Code = "memo_not_in_tx"
	CodeMemoMismatch       Code = "memo_mismatch"
	CodeMemoMultiple       Code = "memo_multiple"
	CodeTxMalformed        Code = "tx_malformed"
	CodeChainUnavailable   Code = "chain_unavailable"
	CodeRailUnavailable    Code = "rail_unavailable"
	CodeNoMatchingTerms    Code = "no_matching_requirements"
	CodeVerifyRefused      Code = "payment_invalid"
	CodeSettleFailed       Code = "settlement_failed"
	CodeSettlementPending  Code = "settlement_pending"
	CodeFacilitatorError   Code = "facilitator_unavailable"
	CodeFreeDailyLimit     Code = "free_daily_limit"
	CodeFreeMinInterval    Code = "free_min_interval"
	CodeFreeSourceLimit    Code = "free_source_limit"
	CodePaymentInProgress  Code = "payment_in_progress"

	// Facilitator rail: the form of an x402 payment payload, and the closed
	// set a facilitator's invalidReason is classified into (its text is
	// never carried).
	CodePayloadMalformed  Code = "payment_payload_malformed"
	CodeInsufficientFunds Code = "payment_insufficient_funds"
	CodeWrongNetwork      Code = "payment_wrong_network"
	CodeWrongScheme       Code = "payment_wrong_scheme"
	CodeWrongAmount       Code = "payment_wrong_amount"
	CodeWrongRecipient    Code = "payment_wrong_recipient"
	CodeWrongAsset        Code = "payment_wrong_asset"
	CodeSignatureInvalid  Code = "payment_signature_invalid"
	CodePaymentExpired    Code = "payment_expired"
	CodeMemoRejected      Code = "payment_memo_rejected"
	CodeTxRejected        Code = "payment_tx_rejected"
)

var details = map[Code]string{
	CodePaymentMalformed:   "The payment transaction header is not a base58 Solana signature of 64 bytes.",
	CodeMemoMissing:        "A payment was presented without the X-Payment-Memo header carrying the challenge memo.",
	CodeMemoInvalid:        "The memo was not issued by this service for this op and URL.",
	CodeMemoWrongOp:        "The memo was issued for another op of this service.",
	CodeMemoExpired:        "The memo has expired; request a fresh challenge.",
	CodePaymentNotFound:    "The payment transaction was not found on chain yet; retry after the indicated delay.",
	CodePaymentAlreadyUsed: "This payment has already been used.",
	CodeTxFailed:           "The payment transaction failed on chain.",
	CodeAmountInsufficient: "The payment transaction did not credit the price to the service's USDC token account.",
	CodeWrongMint:          "The payment transaction did not move USDC.",
	CodeMemoNotInTx:        "The payment transaction carries no SPL Memo instruction.",
	CodeMemoMismatch:       "The payment transaction's memo does not equal the presented memo.",
	CodeMemoMultiple:       "The payment transaction carries more than one SPL Memo instruction.",
	CodeTxMalformed:        "The payment transaction could not be read.",
	CodeChainUnavailable:   "The payment could not be verified right now; retry after the indicated delay.",
	CodeRailUnavailable:    "This payment rail is not offered by this service.",
	CodeNoMatchingTerms:    "The payment does not match the payment requirements of this route.",
	CodeVerifyRefused:      "The facilitator found the payment invalid.",
	CodeSettleFailed:       "The facilitator could not settle the payment.",
	CodeSettlementPending:  "The settlement is not final yet; retry after the indicated delay with the same payment.",
	CodeFacilitatorError:   "The facilitator could not be reached or answered unreadably; the payment was not accepted.",
	CodeFreeDailyLimit:     "The free pre-check allowance of 100 calls per UTC day is used up; the paid op is offered instead.",
	CodeFreeMinInterval:    "Free pre-checks must be at least 5,000 ms apart; the paid op is offered instead.",
	CodeFreeSourceLimit:    "The free pre-checks of this client address, all callers together, are used up for this UTC day (a ceiling stricter than the published per-wallet allowance); the paid op is offered instead.",
	CodePaymentInProgress:  "This payment is being used by another request right now; retry after the indicated delay.",
	CodePayloadMalformed:   "The payment header is not standard base64 of an x402 payment payload of the version this header carries.",
	CodeInsufficientFunds:  "The facilitator found the paying wallet's balance insufficient.",
	CodeWrongNetwork:       "The facilitator found the payment on another network than the one required.",
	CodeWrongScheme:        "The facilitator found the payment scheme unsupported; this service accepts exact.",
	CodeWrongAmount:        "The facilitator found the payment amount different from the price.",
	CodeWrongRecipient:     "The facilitator found the payment addressed to another recipient than this service.",
	CodeWrongAsset:         "The facilitator found the payment in another asset than USDC.",
	CodeSignatureInvalid:   "The facilitator found the payment's signature invalid.",
	CodePaymentExpired:     "The facilitator found the payment outside its validity window.",
	CodeMemoRejected:       "The facilitator found the payment's memo different from the challenge memo.",
	CodeTxRejected:         "The payment transaction would fail, or failed, on chain.",
}

// Detail returns the static sentence of a code.
func (c Code) Detail() string { return details[c] }

// Codes lists every refusal code (for metrics label sets and tests).
func Codes() []Code {
	out := make([]Code, 0, len(details))
	for c := range details {
		out = append(out, c)
	}
	return out
}
