package facilitator

import (
	"encoding/base64"
	"net/http"
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
	terms := gate.Terms{Network: gate.Mainnet, PayTo: "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV", TokenAccount: "BBNSAKH9ikKc9gWN9s8wyENZg1NGrnKGYQBXb1qMTQzK", MaxTimeoutSeconds: 120}
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
