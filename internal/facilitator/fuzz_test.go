package facilitator

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/gate"
)

// FuzzParsePayment: any PAYMENT-SIGNATURE or X-PAYMENT value is either
// matched or refused with a code; the parser never panics.
func FuzzParsePayment(f *testing.F) {
	f.Add("PAYMENT-SIGNATURE", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"scheme":"exact","network":"solana","payload":{"signature":"PROBE-INVALID-SIGNATURE","authorization":{"from":"PROBE","to":"PROBE","value":0}}}`)))
	f.Add("X-PAYMENT", "bogus-not-a-payment-header")
	f.Add("X-PAYMENT", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"solana","payload":{"transaction":"AQ=="}}`)))
	f.Add("PAYMENT-SIGNATURE", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"10000","asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","payTo":"7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV","extra":{"memo":"pv-x"}},"payload":{"transaction":"AQ=="}}`)))
	const evmPayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	auth := `{"from":"0x857b06519E91e3A54538791bDbb0E22373e36b66","to":"` + evmPayTo + `","value":"10000","validAfter":"0","validBefore":"4102444800","nonce":"0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480"}`
	sig := `"0x` + strings.Repeat("2d", 65) + `"`
	f.Add("PAYMENT-SIGNATURE", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"`+evmPayTo+`","extra":{"name":"USD Coin","version":"2"}},"payload":{"signature":`+sig+`,"authorization":`+auth+`}}`)))
	f.Add("X-PAYMENT", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":`+sig+`,"authorization":`+auth+`}}`)))
	terms := gate.Terms{Network: gate.Mainnet, PayTo: "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV", TokenAccount: "BBNSAKH9ikKc9gWN9s8wyENZg1NGrnKGYQBXb1qMTQzK", MaxTimeoutSeconds: 120,
		EVM: &gate.EVMTerms{Network: gate.Base, PayTo: evmPayTo}}
	offer := gate.Offer{Op: "check", Price: 10000}
	f.Fuzz(func(t *testing.T, name, value string) {
		if name != "PAYMENT-SIGNATURE" && name != "X-PAYMENT" {
			name = "X-PAYMENT"
		}
		h := http.Header{}
		h.Set(name, value)
		p, code := parse(h, terms, offer)
		if code == "" && len(p.raw) == 0 {
			t.Fatal("accepted a payment with no payload")
		}
		if code == "" && p.evm && (!gate.SameEVMAddress(p.auth.To, evmPayTo) || p.auth.Value != "10000" || p.network != gate.Base.CAIP2) {
			t.Fatalf("accepted an EVM payment off our terms: %+v", p.auth)
		}
		if code != "" && code.Detail() == "" {
			t.Fatalf("code %q has no static sentence", code)
		}
	})
}

// FuzzDecodeTx: the transaction decoder never panics on any text.
func FuzzDecodeTx(f *testing.F) {
	f.Add("AQ==")
	f.Add("")
	f.Add(base64.StdEncoding.EncodeToString(make([]byte, 200)))
	f.Fuzz(func(t *testing.T, s string) { _, _ = decodeTx(s) })
}
