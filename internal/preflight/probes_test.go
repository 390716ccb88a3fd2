package preflight

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
)

// TestP1BytesSolanaV2 pins P1 for exact on Solana, v2, byte for byte.
func TestP1BytesSolanaV2(t *testing.T) {
	unpaid := v2(solEntry("1000"))
	sel := Select(lint.Decode(unpaid), cleanLint(lint.LegHeader, 1), Options{})
	got, ok := P1JSON(sel)
	if !ok {
		t.Fatal("P1 not built")
	}
	want := `{"x402Version":2,"resource":{"description":"d","url":"` + testURL + `"},` +
		`"accepted":{"amount":"1000","asset":"` + solUSDC + `","extra":{"feePayer":"` + solPayTo + `"},"maxTimeoutSeconds":60,"network":"` + solMainnet + `","payTo":"` + solPayTo + `","scheme":"exact"},` +
		`"payload":{"transaction":"UFJPQkUtSU5WQUxJRC1OT1QtQS1UUkFOU0FDVElPTg=="}}`
	if string(got) != want {
		t.Errorf("P1 JSON\n got %s\nwant %s", got, want)
	}
	v, _ := P1Value(sel)
	if v != base64.StdEncoding.EncodeToString([]byte(want)) {
		t.Error("P1 header value is not standard base64 of the JSON")
	}
}

// TestP1BytesEVMV2 pins P1 for exact on EVM, v2, byte for byte.
func TestP1BytesEVMV2(t *testing.T) {
	unpaid := v2(evmEntry("2500"))
	sel := Select(lint.Decode(unpaid), cleanLint(lint.LegHeader, 1), Options{})
	got, _ := P1JSON(sel)
	want := `{"x402Version":2,"resource":{"description":"d","url":"` + testURL + `"},` +
		`"accepted":{"amount":"2500","asset":"` + baseUSDC + `","extra":{"name":"USD Coin","version":"2"},"maxTimeoutSeconds":60,"network":"eip155:8453","payTo":"` + basePayTo + `","scheme":"exact"},` +
		`"payload":{"signature":"0x` + strings.Repeat("0", 130) + `","authorization":{"from":"0x` + strings.Repeat("0", 40) + `","to":"` + basePayTo + `","value":"2500","validAfter":"0","validBefore":"0","nonce":"0x` + strings.Repeat("0", 64) + `"}}}`
	if string(got) != want {
		t.Errorf("P1 JSON\n got %s\nwant %s", got, want)
	}
}

// TestP1BytesV1 pins the v1 form: scheme and network as offered.
func TestP1BytesV1(t *testing.T) {
	unpaid := v1(v1Entry("base", "10000"))
	sel := Select(lint.Decode(unpaid), cleanLint(lint.LegBody, 1), Options{})
	got, _ := P1JSON(sel)
	want := `{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x` + strings.Repeat("0", 130) +
		`","authorization":{"from":"0x` + strings.Repeat("0", 40) + `","to":"` + basePayTo + `","value":"10000","validAfter":"0","validBefore":"0","nonce":"0x` + strings.Repeat("0", 64) + `"}}}`
	if string(got) != want {
		t.Errorf("P1 JSON\n got %s\nwant %s", got, want)
	}
	probes := Probes(sel, http.MethodGet, []byte(`{}`))
	if probes[0].Header[HeaderV1] == "" || probes[1].Header[HeaderV1] != BogusPayment {
		t.Errorf("v1 probes do not use X-PAYMENT: %v", probes[:2])
	}
}

// TestNoFundsProperty decodes what P1 sends and checks, byte for byte, that
// nothing in it can move funds.
func TestNoFundsProperty(t *testing.T) {
	t.Run("solana transaction is ASCII text, not a transaction", func(t *testing.T) {
		sel := Select(lint.Decode(v2(solEntry("1"))), cleanLint(lint.LegHeader, 1), Options{})
		v, _ := P1Value(sel)
		raw, _ := base64.StdEncoding.DecodeString(v)
		var p struct {
			Payload map[string]string `json:"payload"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || len(p.Payload) != 1 {
			t.Fatalf("payload %v: %v", p.Payload, err)
		}
		tx, err := base64.StdEncoding.DecodeString(p.Payload["transaction"])
		if err != nil || !bytes.Equal(tx, []byte("PROBE-INVALID-NOT-A-TRANSACTION")) || len(tx) != 31 {
			t.Fatalf("transaction bytes %q", tx)
		}
		// A serialized Solana transaction starts with a compact-u16 count of
		// signatures followed by that many 64-byte signatures: 'P' (80)
		// would announce 80 signatures, 5,120 bytes, in 31 bytes.
		if int(tx[0])*64 < len(tx) {
			t.Fatal("the probe bytes could frame a transaction")
		}
	})
	t.Run("evm signature is zero and the authorization expired", func(t *testing.T) {
		sel := Select(lint.Decode(v2(evmEntry("1"))), cleanLint(lint.LegHeader, 1), Options{})
		v, _ := P1Value(sel)
		raw, _ := base64.StdEncoding.DecodeString(v)
		var p struct {
			Payload struct {
				Signature     string            `json:"signature"`
				Authorization map[string]string `json:"authorization"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if p.Payload.Signature != "0x"+strings.Repeat("0", 130) {
			t.Errorf("signature %q is not 65 zero bytes", p.Payload.Signature)
		}
		a := p.Payload.Authorization
		if a["validBefore"] != "0" || a["validAfter"] != "0" || a["from"] != "0x"+strings.Repeat("0", 40) || a["nonce"] != "0x"+strings.Repeat("0", 64) {
			t.Errorf("authorization %v is not expired from the zero address", a)
		}
	})
	t.Run("P2 and the matrix carry no payment", func(t *testing.T) {
		sel := Select(lint.Decode(v2(solEntry("1"))), cleanLint(lint.LegHeader, 1), Options{})
		ps := Probes(sel, http.MethodPost, []byte(`{"q":1}`))
		ids := []string{}
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		if strings.Join(ids, ",") != "p1_structural,p2_bogus,head,other" {
			t.Fatalf("probe order %v", ids)
		}
		if ps[1].Header[HeaderV2] != "bogus-not-a-payment-header" || len(ps[1].Header) != 2 {
			t.Errorf("P2 headers %v", ps[1].Header)
		}
		if ps[2].Method != http.MethodHead || len(ps[2].Header) != 0 || ps[2].Body != nil {
			t.Errorf("HEAD probe %+v", ps[2])
		}
		if ps[3].Method != http.MethodGet || len(ps[3].Header) != 0 {
			t.Errorf("other-method probe %+v", ps[3])
		}
		for _, p := range ps[:2] {
			if string(p.Body) != `{"q":1}` || p.Header["Content-Type"] != "application/json" {
				t.Errorf("%s: POST probe body %q", p.ID, p.Body)
			}
		}
	})
}

func TestDocumentMatchesProbeConstants(t *testing.T) {
	d := Document()
	if d.DocumentID != DocumentID || d.Revision != Revision || d.Corpus.ID != CorpusID {
		t.Errorf("document identity %s %s %s", d.DocumentID, d.Revision, d.Corpus.ID)
	}
	if d.Probes.P2.Value != BogusPayment || d.Probes.PaymentHeader.V2 != HeaderV2 || d.Probes.PaymentHeader.V1 != HeaderV1 {
		t.Error("document probe headers or P2 value differ from the code")
	}
	if d.Probes.P1.PayloadExactSolana != string(solanaPayload()) {
		t.Errorf("document Solana payload %s, code %s", d.Probes.P1.PayloadExactSolana, solanaPayload())
	}
	if strings.Join(d.Probes.Order, ",") != "p1_structural,p2_bogus,head,other" {
		t.Errorf("document order %v", d.Probes.Order)
	}
}

func TestP1NotSent(t *testing.T) {
	other := solEntry("1")
	other["scheme"] = "upto"
	stellar := solEntry("1")
	stellar["network"] = "stellar:pubnet"
	for name, e := range map[string]map[string]any{"scheme upto": other, "stellar network": stellar} {
		t.Run(name, func(t *testing.T) {
			sel := Select(lint.Decode(v2(e)), cleanLint(lint.LegHeader, 1), Options{})
			if sel.Selected == nil {
				t.Fatal("not selected")
			}
			if _, ok := P1JSON(sel); ok || sel.Probed() {
				t.Error("P1 built for an unprobed scheme")
			}
			if ps := Probes(sel, http.MethodGet, nil); ps[0].ID != ProbeP2 {
				t.Errorf("first probe %s", ps[0].ID)
			}
		})
	}
}
