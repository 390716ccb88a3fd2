package ops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/preflight"
)

// Loopback sellers that verify payments partially (issue 20's Done-when):
// each serves content for any payment passing its checks. Revision 2's P1
// passes every one of them, so preflight must STOP fail_open; a seller that
// does every cheap check and then asks a facilitator (which refuses) stays GO.

const (
	ptBaseUSDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	ptEVMPayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	ptSolUSDC  = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	ptSolPayTo = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	ptFeePayer = "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"
)

// check is one seller's verification of a decoded payment for the entry it
// offered on that dialect.
type check func(doc, entry map[string]any, dialect int, now time.Time) bool

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func evmAuth(doc map[string]any) (map[string]any, string) {
	p, _ := doc["payload"].(map[string]any)
	a, _ := p["authorization"].(map[string]any)
	return a, str(p, "signature")
}

func amountOf(entry map[string]any) string {
	if a := str(entry, "amount"); a != "" {
		return a
	}
	return str(entry, "maxAmountRequired")
}

var evmChecks = map[string]check{
	"a-time-window": func(doc, _ map[string]any, _ int, now time.Time) bool {
		a, _ := evmAuth(doc)
		after, err1 := strconv.ParseInt(str(a, "validAfter"), 10, 64)
		before, err2 := strconv.ParseInt(str(a, "validBefore"), 10, 64)
		return err1 == nil && err2 == nil && after <= now.Unix() && now.Unix() < before
	},
	"b-recipient": func(doc, e map[string]any, _ int, _ time.Time) bool {
		a, _ := evmAuth(doc)
		return strings.EqualFold(str(a, "to"), str(e, "payTo"))
	},
	"c-value": func(doc, e map[string]any, _ int, _ time.Time) bool {
		a, _ := evmAuth(doc)
		return str(a, "value") == amountOf(e)
	},
	"d-structure": func(doc, _ map[string]any, dialect int, _ time.Time) bool {
		a, sig := evmAuth(doc)
		v, _ := doc["x402Version"].(float64)
		ok := int(v) == dialect && len(sig) == 132 && strings.HasPrefix(sig, "0x") && len(a) == 6
		for k, n := range map[string]int{"from": 42, "to": 42, "nonce": 66} {
			ok = ok && len(str(a, k)) == n && strings.HasPrefix(str(a, k), "0x")
		}
		return ok
	},
	"e-echoed-entry": func(doc, e map[string]any, dialect int, _ time.Time) bool {
		if dialect == 1 {
			return str(doc, "scheme") == str(e, "scheme") && str(doc, "network") == str(e, "network")
		}
		x, _ := json.Marshal(doc["accepted"])
		y, _ := json.Marshal(e)
		return bytes.Equal(x, y)
	},
}

// evmAll is (f): every check above, a non-zero payer and a signature of
// valid shape (v 27/28, s in the low half) — but no signature recovery.
func evmAll(doc, e map[string]any, dialect int, now time.Time) bool {
	for _, c := range evmChecks {
		if !c(doc, e, dialect, now) {
			return false
		}
	}
	a, sig := evmAuth(doc)
	raw, err := hexBytes(sig)
	if err != nil || strings.Trim(str(a, "from")[2:], "0") == "" || strings.Trim(sig[2:], "0") == "" {
		return false
	}
	n, _ := new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	s := new(big.Int).SetBytes(raw[32:64])
	return (raw[64] == 27 || raw[64] == 28) && s.Sign() > 0 && s.Cmp(n.Rsh(n, 1)) <= 0
}

func hexBytes(s string) ([]byte, error) {
	b := make([]byte, (len(s)-2)/2)
	for i := range b {
		v, err := strconv.ParseUint(s[2+2*i:4+2*i], 16, 8)
		if err != nil {
			return nil, err
		}
		b[i] = byte(v)
	}
	return b, nil
}

// solTx reads a serialized transaction: its static keys and instructions;
// ok only when every byte is accounted for.
func solTx(doc map[string]any) (keys [][]byte, ins [][3][]byte, ok bool) {
	p, _ := doc["payload"].(map[string]any)
	raw, err := base64.StdEncoding.DecodeString(str(p, "transaction"))
	if err != nil {
		return nil, nil, false
	}
	i := 0
	get := func(n int) []byte {
		if n < 0 || i+n > len(raw) {
			i = len(raw) + 1
			return nil
		}
		i += n
		return raw[i-n : i]
	}
	count := func() int { // every count here is below 128
		b := get(1)
		if b == nil || b[0]&0x80 != 0 {
			i = len(raw) + 1
			return 0
		}
		return int(b[0])
	}
	get(64 * count())
	if b := get(1); b == nil || b[0] != 0x80 {
		return nil, nil, false
	}
	get(3)
	for range count() {
		keys = append(keys, get(32))
	}
	get(32)
	for range count() {
		prog := get(1)
		accts := get(count())
		data := get(count())
		ins = append(ins, [3][]byte{prog, accts, data})
	}
	count()
	return keys, ins, i == len(raw)
}

func solParses(doc, _ map[string]any, _ int, _ time.Time) bool { _, _, ok := solTx(doc); return ok }

// solTransfer is (f'): it parses and holds a TransferChecked of the amount
// to the payee's associated token account.
func solTransfer(doc, e map[string]any, _ int, _ time.Time) bool {
	keys, ins, ok := solTx(doc)
	if !ok {
		return false
	}
	var owner, mint, tok [32]byte
	for k, s := range map[*[32]byte]string{&owner: str(e, "payTo"), &mint: str(e, "asset"), &tok: chain.TokenProgram} {
		b, _ := base58.Decode(s)
		copy(k[:], b)
	}
	dest, _ := chain.AssociatedTokenAddress(owner, tok, mint)
	want, _ := strconv.ParseUint(amountOf(e), 10, 64)
	for _, in := range ins {
		if int(in[0][0]) < len(keys) && bytes.Equal(keys[in[0][0]], tok[:]) && len(in[2]) == 10 && in[2][0] == 12 &&
			binary.LittleEndian.Uint64(in[2][1:9]) == want && len(in[1]) == 4 && bytes.Equal(keys[in[1][2]], dest[:]) {
			return true
		}
	}
	return false
}

// partialSeller advertises the legs it has entries for and verifies each
// dialect with its check; a nil check serves any header at all. With a
// facilitator, a payment passing the check is then sent there to verify.
type partialSeller struct {
	v2, v1      map[string]any
	checks      map[int]check
	facilitator string
	now         time.Time
	url         string
}

func (s *partialSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for d, h := range map[int]string{2: "PAYMENT-SIGNATURE", 1: "X-PAYMENT"} {
		v := r.Header.Get(h)
		if v == "" || (d == 2 && s.v2 == nil) || (d == 1 && s.v1 == nil) {
			continue
		}
		entry := s.v2
		if d == 1 {
			entry = s.v1
		}
		c := s.checks[d]
		if c == nil {
			w.Write([]byte(`{"temperature":21}`))
			return
		}
		raw, err := base64.StdEncoding.DecodeString(v)
		var doc map[string]any
		if err != nil || json.Unmarshal(raw, &doc) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if !c(doc, entry, d, s.now) {
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte(`{"error":"invalid_payment"}`))
			return
		}
		if s.facilitator != "" {
			body, _ := json.Marshal(map[string]any{"x402Version": d, "paymentPayload": doc, "paymentRequirements": entry})
			resp, err := http.Post(s.facilitator+"/verify", "application/json", bytes.NewReader(body))
			var vr struct {
				IsValid       bool   `json:"isValid"`
				InvalidReason string `json:"invalidReason"`
			}
			if err == nil {
				json.NewDecoder(resp.Body).Decode(&vr)
				resp.Body.Close()
			}
			if !vr.IsValid {
				w.WriteHeader(http.StatusPaymentRequired)
				json.NewEncoder(w).Encode(map[string]string{"error": vr.InvalidReason})
				return
			}
		}
		w.Write([]byte(`{"temperature":21}`))
		return
	}
	if s.v2 != nil {
		raw, _ := json.Marshal(map[string]any{"x402Version": 2, "resource": map[string]any{"url": s.url}, "accepts": []any{s.v2}})
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(raw))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	if s.v1 != nil {
		json.NewEncoder(w).Encode(map[string]any{"x402Version": 1, "error": "X-PAYMENT header is required", "accepts": []any{s.v1}})
		return
	}
	w.Write([]byte(`{"error":"Payment required"}`))
}

func evmV2() map[string]any {
	return map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "1000", "asset": ptBaseUSDC, "payTo": ptEVMPayTo,
		"maxTimeoutSeconds": 60.0, "extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

func evmV1() map[string]any {
	return map[string]any{"scheme": "exact", "network": "base", "maxAmountRequired": "1000", "asset": ptBaseUSDC, "payTo": ptEVMPayTo,
		"maxTimeoutSeconds": 60.0, "description": "d", "mimeType": "application/json", "extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

func solV2() map[string]any {
	return map[string]any{"scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "amount": "1000", "asset": ptSolUSDC,
		"payTo": ptSolPayTo, "maxTimeoutSeconds": 60.0, "extra": map[string]any{"feePayer": ptFeePayer}}
}

func solV1() map[string]any {
	e := solV2()
	delete(e, "amount")
	e["network"], e["maxAmountRequired"], e["description"], e["mimeType"] = "solana", "1000", "d", "application/json"
	return e
}

func runPartial(t *testing.T, s *partialSeller) PreflightReport {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/api"
	if s.v1 != nil {
		s.v1["resource"] = s.url
	}
	r := runner(t)
	r.lint = cleanLint
	s.now = r.now()
	rep, err := r.Preflight(context.Background(), PreflightRequest{URL: s.url})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestPreflightStopsEveryPartialVerifier(t *testing.T) {
	type tc struct {
		name  string
		entry func() map[string]any
		d     int
		c     check
	}
	var cases []tc
	for _, d := range []int{2, 1} {
		ev, sv := evmV2, solV2
		if d == 1 {
			ev, sv = evmV1, solV1
		}
		for name, c := range evmChecks {
			cases = append(cases, tc{"evm v" + strconv.Itoa(d) + " " + name, ev, d, c})
		}
		cases = append(cases, tc{"evm v" + strconv.Itoa(d) + " f-all-but-signature", ev, d, evmAll},
			tc{"solana v" + strconv.Itoa(d) + " d'-parses", sv, d, solParses},
			tc{"solana v" + strconv.Itoa(d) + " f'-transfer-to-payee-ata", sv, d, solTransfer})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &partialSeller{checks: map[int]check{c.d: c.c}}
			if c.d == 2 {
				s.v2 = c.entry()
			} else {
				s.v1 = c.entry()
			}
			rep := runPartial(t, s)
			if rep.Decision != preflight.Stop || len(rep.Reasons) == 0 || rep.Reasons[0] != preflight.ReasonFailOpen {
				t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
			}
			if p := rep.Probes[0]; p.ID != preflight.ProbeP1 || p.Dialect != c.d || p.Grade == nil || *p.Grade != preflight.FailOpen {
				t.Errorf("P1 %+v: the partial verifier must accept it", p)
			}
		})
	}
}

func TestPreflightHonestSellersStayGO(t *testing.T) {
	var calls atomic.Int64
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(`{"isValid":false,"invalidReason":"invalid_exact_evm_payload_signature"}`))
	}))
	t.Cleanup(fac.Close)
	for name, s := range map[string]func() *partialSeller{
		"evm v2": func() *partialSeller { return &partialSeller{v2: evmV2(), checks: map[int]check{2: evmAll}} },
		"evm v1": func() *partialSeller { return &partialSeller{v1: evmV1(), checks: map[int]check{1: evmAll}} },
		"solana v2": func() *partialSeller {
			return &partialSeller{v2: solV2(), checks: map[int]check{2: solTransfer}}
		},
		"solana v1": func() *partialSeller {
			return &partialSeller{v1: solV1(), checks: map[int]check{1: solTransfer}}
		},
		"dual dialect refusing both": func() *partialSeller {
			return &partialSeller{v2: solV2(), v1: evmV1(), checks: map[int]check{2: solTransfer, 1: evmAll}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			seller := s()
			seller.facilitator = fac.URL
			before := calls.Load()
			rep := runPartial(t, seller)
			if rep.Decision != preflight.Go {
				t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
			}
			if got := calls.Load() - before; got != int64(len(rep.Dialects)) {
				t.Errorf("%d facilitator calls, want one per P1 (%v): every cheap check must pass first", got, rep.Dialects)
			}
		})
	}
}

func TestPreflightDualDialectV1FailOpen(t *testing.T) {
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"isValid":false,"invalidReason":"transaction_simulation_failed"}`))
	}))
	t.Cleanup(fac.Close)
	// v2 verified through the facilitator; v1 serves any X-PAYMENT, even bogus.
	rep := runPartial(t, &partialSeller{v2: solV2(), v1: evmV1(), checks: map[int]check{2: solTransfer}, facilitator: fac.URL})
	if rep.Decision != preflight.Stop || rep.Reasons[0] != preflight.ReasonFailOpen {
		t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
	}
	var got []string
	for _, p := range rep.Probes {
		got = append(got, p.ID+"/"+p.Header+"/"+string(*p.Grade))
	}
	if strings.Join(got, ",") != "p1_structural/PAYMENT-SIGNATURE/CLOSED,p2_bogus/PAYMENT-SIGNATURE/CLOSED,p1_structural/X-PAYMENT/FAIL-OPEN,p2_bogus/X-PAYMENT/FAIL-OPEN" {
		t.Errorf("probes %v", got)
	}
}
