package facilitator

import (
	"encoding/base64"
	"testing"

	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
)

func TestDecodeTx(t *testing.T) {
	buyer := facilitatortest.Address("buyer")
	text := facilitatortest.Transaction(facilitatortest.Transfer{
		Payer: buyer, FeePayer: facilitatortest.Address("fee"), Mint: gate.Mainnet.Mint,
		To: facilitatortest.Address("to"), Amount: 10000, Memo: "pv-memo",
	})
	tx, err := decodeTx(text)
	if err != nil {
		t.Fatal(err)
	}
	if tx.signatures != 2 || len(tx.instructions) != 4 || tx.tokenAuthority() != buyer {
		t.Errorf("decoded %+v, authority %q", tx, tx.tokenAuthority())
	}
	raw, _ := base64.StdEncoding.DecodeString(text)
	bad := map[string][]byte{
		"truncated":        raw[:len(raw)-1],
		"trailing bytes":   append(append([]byte{}, raw...), 0),
		"no signatures":    append([]byte{0}, raw[1:]...),
		"version 1":        func() []byte { b := append([]byte{}, raw...); b[1+128] = 0x81; return b }(),
		"signature count":  func() []byte { b := append([]byte{}, raw...); b[0] = 1; return b }(),
		"empty":            {},
		"over packet size": make([]byte, maxTxBytes+1),
	}
	for name, b := range bad {
		if _, err := decodeTx(base64.StdEncoding.EncodeToString(b)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := decodeTx("not base64!"); err == nil {
		t.Error("not base64: decoded")
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		reason string
		want   gate.Code
	}{
		{"insufficient_funds", gate.CodeInsufficientFunds},
		{"invalid_network", gate.CodeWrongNetwork},
		{"invalid_exact_svm_network_mismatch", gate.CodeWrongNetwork},
		{"invalid_scheme", gate.CodeWrongScheme},
		{"unsupported_scheme", gate.CodeWrongScheme},
		{"invalid_exact_svm_payload_amount_mismatch", gate.CodeWrongAmount},
		{"invalid_exact_evm_payload_authorization_value", gate.CodeWrongAmount},
		{"invalid_exact_svm_payload_recipient_mismatch", gate.CodeWrongRecipient},
		{"invalid_exact_svm_payload_mint_mismatch", gate.CodeWrongAsset},
		{"invalid_exact_svm_payload_signature_invalid", gate.CodeSignatureInvalid},
		{"invalid_exact_evm_payload_authorization_valid_before", gate.CodePaymentExpired},
		{"invalid_exact_svm_payload_memo_mismatch", gate.CodeMemoRejected},
		{"invalid_exact_svm_payload_memo_count", gate.CodeMemoRejected},
		{"invalid_exact_svm_transaction_simulation_failed", gate.CodeTxRejected},
		{"invalid_exact_svm_transaction_failed", gate.CodeTxRejected},
		{"duplicate_settlement", gate.CodePaymentAlreadyUsed},
		{"INSUFFICIENT_FUNDS", gate.CodeInsufficientFunds},
		{"invalid_exact_svm_smart_wallet_program_not_allowed: Mint1111", gate.CodeVerifyRefused},
		{"invalid_payload", gate.CodeVerifyRefused},
		{"", gate.CodeVerifyRefused},
		{"something new", gate.CodeVerifyRefused},
	}
	for _, tt := range tests {
		if got := classify(tt.reason, gate.CodeVerifyRefused); got != tt.want {
			t.Errorf("classify(%q) = %q, want %q", tt.reason, got, tt.want)
		}
	}
	// Every code the rules produce has its static sentence.
	for _, r := range reasonRules {
		if r.code.Detail() == "" {
			t.Errorf("%q has no sentence", r.code)
		}
	}
}
