package main

// Partial verifiers: sellers that check some of what a payment carries and
// serve content when those checks pass, as issue 20's review found them.
// Each answers the payment probes from their bytes, so a corpus case pins
// that revision 2's P1 passes every cheap check and only a signature check
// refuses it. The honest seller does every cheap check, then asks a
// facilitator that refuses.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

var (
	hexSig   = regexp.MustCompile(`^0x[0-9a-fA-F]{130}$`)
	hexNonce = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	digits   = regexp.MustCompile(`^[0-9]+$`)
)

func served() capture {
	return ok(200, map[string]string{"content-type": "application/json"}, `{"temperature":21}`)
}
func refused() capture {
	return ok(402, map[string]string{"content-type": "application/json"}, `{"error":"invalid_payment"}`)
}
func malformed() capture {
	return ok(400, map[string]string{"content-type": "application/json"}, `{"error":"invalid payment header"}`)
}

// payment decodes a payment header value as a seller does.
func payment(v string) (map[string]any, bool) {
	raw, ok := fromBase64(v)
	if !ok {
		return nil, false
	}
	return parseJSONObject(raw)
}

// evmCheck is one cheap check of an EVM exact payment.
type evmCheck func(root, auth map[string]any, sig string, offered *candidate, dialect int, now int64) bool

func num(s string) (int64, bool) {
	if !digits.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

var evmChecks = map[string]evmCheck{
	"time-window": func(_, a map[string]any, _ string, _ *candidate, _ int, now int64) bool {
		after, ok1 := num(text(a, "validAfter"))
		before, ok2 := num(text(a, "validBefore"))
		return ok1 && ok2 && after <= now && now < before
	},
	"recipient": func(_, a map[string]any, _ string, o *candidate, _ int, _ int64) bool {
		return strings.EqualFold(text(a, "to"), text(o.entry, "payTo"))
	},
	"value": func(_, a map[string]any, _ string, o *candidate, _ int, _ int64) bool {
		return text(a, "value") == o.amount()
	},
	"structure": func(root, a map[string]any, sig string, _ *candidate, dialect int, _ int64) bool {
		v, _ := root["x402Version"].(interface{ String() string })
		ok := v != nil && v.String() == strconv.Itoa(dialect) && hexSig.MatchString(sig) &&
			hexAddr.MatchString(text(a, "from")) && hexAddr.MatchString(text(a, "to")) && hexNonce.MatchString(text(a, "nonce")) &&
			digits.MatchString(text(a, "value")) && digits.MatchString(text(a, "validAfter")) && digits.MatchString(text(a, "validBefore"))
		if dialect == 2 {
			_, isObj := root["accepted"].(map[string]any)
			return ok && isObj
		}
		return ok && text(root, "scheme") != "" && text(root, "network") != ""
	},
	"echoed-entry": func(root, _ map[string]any, _ string, o *candidate, dialect int, _ int64) bool {
		if dialect == 2 {
			return bytes.Equal(toJSON(root["accepted"]), toJSON(o.entry))
		}
		return text(root, "scheme") == text(o.entry, "scheme") && text(root, "network") == text(o.entry, "network")
	},
}

var evmCheckOrder = []string{"time-window", "recipient", "value", "structure", "echoed-entry"}

// nonZeroPayerAndSignature: from is not the zero address, the signature not
// all zeros, v is 27 or 28 and s in the low half.
func nonZeroPayerAndSignature(a map[string]any, sig string) bool {
	if !hexSig.MatchString(sig) || strings.Trim(text(a, "from")[2:], "0") == "" {
		return false
	}
	b, _ := hex.DecodeString(sig[2:])
	s := new(big.Int).SetBytes(b[32:64])
	return strings.Trim(sig[2:], "0") != "" && (b[64] == 27 || b[64] == 28) && s.Sign() > 0 && s.Cmp(new(big.Int).Rsh(secpOrder, 1)) <= 0
}

// evmSeller serves any EVM payment passing the named checks ("all": every
// check, a non-zero payer and a signature of valid shape, and no signature
// verification); "honest" does all of that and then refuses, as its
// facilitator's verification does.
func evmSeller(check string) sellerModel {
	return func(dialect int, value string, o *candidate, now int64) capture {
		root, isPayment := payment(value)
		payload, _ := root["payload"].(map[string]any)
		auth, _ := payload["authorization"].(map[string]any)
		if !isPayment || auth == nil || o == nil {
			return malformed()
		}
		sig := text(payload, "signature")
		pass := true
		switch check {
		case "all", "honest":
			for _, name := range evmCheckOrder {
				pass = pass && evmChecks[name](root, auth, sig, o, dialect, now)
			}
			pass = pass && nonZeroPayerAndSignature(auth, sig)
		default:
			pass = evmChecks[check](root, auth, sig, o, dialect, now)
		}
		switch {
		case !pass:
			return refused()
		case check == "honest":
			return ok(402, map[string]string{"content-type": "application/json"}, `{"error":"invalid_exact_evm_payload_signature"}`)
		}
		return served()
	}
}

// wire is what a seller reads of a serialized Solana transaction.
type wire struct {
	keys [][]byte
	ins  []struct {
		program  int
		accounts []int
		data     []byte
	}
}

// parseWire reads a legacy or v0 transaction; ok only when every byte is
// accounted for.
func parseWire(raw []byte) (wire, bool) {
	var w wire
	i := 0
	next := func(n int) ([]byte, bool) {
		if n < 0 || i+n > len(raw) {
			return nil, false
		}
		b := raw[i : i+n]
		i += n
		return b, true
	}
	length := func() (int, bool) {
		v := 0
		for shift := 0; shift < 21; shift += 7 {
			b, ok := next(1)
			if !ok {
				return 0, false
			}
			v |= int(b[0]&0x7f) << shift
			if b[0]&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	nsig, ok := length()
	if !ok || nsig == 0 {
		return w, false
	}
	if _, ok := next(64 * nsig); !ok {
		return w, false
	}
	head, ok := next(1)
	if !ok {
		return w, false
	}
	v0 := head[0]&0x80 != 0
	if v0 {
		if head[0] != 0x80 {
			return w, false
		}
		if head, ok = next(1); !ok {
			return w, false
		}
	}
	if int(head[0]) != nsig {
		return w, false
	}
	if _, ok := next(2); !ok {
		return w, false
	}
	nkeys, ok := length()
	if !ok {
		return w, false
	}
	for range nkeys {
		k, ok := next(32)
		if !ok {
			return w, false
		}
		w.keys = append(w.keys, k)
	}
	if _, ok := next(32); !ok {
		return w, false
	}
	nins, ok := length()
	if !ok {
		return w, false
	}
	for range nins {
		var in struct {
			program  int
			accounts []int
			data     []byte
		}
		p, ok := next(1)
		if !ok || int(p[0]) >= nkeys {
			return w, false
		}
		in.program = int(p[0])
		na, ok := length()
		if !ok {
			return w, false
		}
		acc, ok := next(na)
		if !ok {
			return w, false
		}
		for _, a := range acc {
			in.accounts = append(in.accounts, int(a))
		}
		nd, ok := length()
		if !ok {
			return w, false
		}
		if in.data, ok = next(nd); !ok {
			return w, false
		}
		w.ins = append(w.ins, in)
	}
	if v0 {
		nl, ok := length()
		if !ok || nl != 0 {
			return w, false
		}
	}
	return w, i == len(raw)
}

// transfersToPayee: a top-level TransferChecked of the offered amount to the
// payee's associated token account for the asset.
func transfersToPayee(w wire, o *candidate) bool {
	payTo, mint, _, amount, ok := svmTerms(o)
	if !ok {
		return false
	}
	for _, in := range w.ins {
		prog := w.keys[in.program]
		for _, p := range []string{tokenProgram, token2022} {
			if !bytes.Equal(prog, mustKey(p)) || len(in.data) != 10 || in.data[0] != 12 || len(in.accounts) < 4 || in.accounts[2] >= len(w.keys) {
				continue
			}
			if binary.LittleEndian.Uint64(in.data[1:9]) == amount && bytes.Equal(w.keys[in.accounts[2]], ata(payTo, mint, p)) {
				return true
			}
		}
	}
	return false
}

// svmSeller serves any Solana payment whose transaction parses ("parses")
// or also pays the payee's token account ("transfer"); "honest" checks both
// and then refuses, as its facilitator does.
func svmSeller(check string) sellerModel {
	return func(_ int, value string, o *candidate, _ int64) capture {
		root, isPayment := payment(value)
		payload, _ := root["payload"].(map[string]any)
		if !isPayment || payload == nil || o == nil {
			return malformed()
		}
		raw, err := base64.StdEncoding.DecodeString(text(payload, "transaction"))
		w, parses := parseWire(raw)
		pass := err == nil && parses && (check == "parses" || transfersToPayee(w, o))
		switch {
		case !pass:
			return refused()
		case check == "honest":
			return ok(402, map[string]string{"content-type": "application/json"}, `{"error":"transaction_simulation_failed"}`)
		}
		return served()
	}
}

// byDialect answers each dialect's probes with its own seller; "open" serves
// any header at all.
func byDialect(v2, v1 sellerModel) sellerModel {
	return func(dialect int, value string, o *candidate, now int64) capture {
		m := v1
		if dialect == 2 {
			m = v2
		}
		if m == nil {
			return served()
		}
		return m(dialect, value, o, now)
	}
}

func solV1Entry() map[string]any {
	return map[string]any{"scheme": "exact", "network": "solana", "maxAmountRequired": "10000", "resource": sellerURL,
		"description": "Current weather", "mimeType": "application/json", "asset": solMint, "payTo": solPayee,
		"maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": solPayee}}
}

// partialCases are the Done-when sellers of issue 20, in both dialects.
func partialCases() []cases {
	var out []cases
	evmLeg := func(dialect int) func(in *caseInput) {
		return func(in *caseInput) {
			c, l := v2(nil, evmEntry()), lintClean("header", evmEntry())
			if dialect == 1 {
				c, l = v1(v1Entry()), lintClean("body", v1Entry())
			}
			in.Lint[0].Capture, in.LintResult, in.Second = c, l, ptr(c)
		}
	}
	svmLeg := func(dialect int) func(in *caseInput) {
		return func(in *caseInput) {
			if dialect == 1 {
				c := v1(solV1Entry())
				in.Lint[0].Capture, in.LintResult, in.Second = c, lintClean("body", solV1Entry()), ptr(c)
			}
		}
	}
	names := map[string]string{"time-window": "(a) the time window only", "recipient": "(b) the recipient only",
		"value": "(c) the value only", "structure": "(d) the JSON structure only", "echoed-entry": "(e) the echoed entry only",
		"all": "(f) all of (a)-(e), a non-zero payer and a signature of valid shape, but no signature check"}
	for _, d := range []int{2, 1} {
		for _, check := range append(append([]string{}, evmCheckOrder...), "all") {
			leg, check := evmLeg(d), check
			out = append(out, mk("stop-partial-evm-v"+strconv.Itoa(d)+"-"+check,
				"an EVM v"+strconv.Itoa(d)+" seller that serves any payment passing "+names[check]+": P1 passes, FAIL-OPEN",
				func(in *caseInput) { leg(in); in.seller = evmSeller(check) }))
		}
		leg := svmLeg(d)
		out = append(out,
			mk("stop-partial-svm-v"+strconv.Itoa(d)+"-parses", "a Solana v"+strconv.Itoa(d)+" seller that serves any payment whose transaction parses as a wire transaction (d')",
				func(in *caseInput) { leg(in); in.seller = svmSeller("parses") }),
			mk("stop-partial-svm-v"+strconv.Itoa(d)+"-transfer-to-payee-ata", "a Solana v"+strconv.Itoa(d)+" seller that also requires a TransferChecked of the amount to the payee's associated token account (f')",
				func(in *caseInput) { leg(in); in.seller = svmSeller("transfer") }),
			mk("go-honest-evm-v"+strconv.Itoa(d)+"-facilitator-refuses", "every cheap check passes, then the facilitator refuses the signature: CLOSED",
				func(in *caseInput) { evmLeg(d)(in); in.seller = evmSeller("honest") }),
			mk("go-honest-svm-v"+strconv.Itoa(d)+"-facilitator-refuses", "the transaction parses and pays the payee's token account, then the facilitator refuses: CLOSED",
				func(in *caseInput) { leg(in); in.seller = svmSeller("honest") }))
	}
	dual := func(in *caseInput) {
		c := v2(nil, solEntry())
		c.BodyText = v1(v1Entry()).BodyText
		in.Lint[0].Capture, in.Second = c, ptr(c)
		in.LintResult = lintClean("header", solEntry())
		in.LintResult.Dialect.V1Body = true
		in.LintResult.Entries = append(in.LintResult.Entries, lintEntry{Index: 0, Leg: "body", X402Version: 1, Scheme: "exact", Network: "base"})
	}
	out = append(out,
		mk("stop-dual-dialect-v1-fail-open", "a v2 header and a v1 body: v2 verified honestly, v1 serves any X-PAYMENT (even bogus): fail_open",
			func(in *caseInput) { dual(in); in.seller = byDialect(svmSeller("honest"), nil) }),
		mk("go-dual-dialect-both-refuse", "a v2 header and a v1 body, both dialects refused by a verifying seller",
			func(in *caseInput) { dual(in); in.seller = byDialect(svmSeller("honest"), evmSeller("honest")) }),
		mk("hold-dual-dialect-v1-unprobed", "a v2 header and a v1 body whose only entry has a lint error: v1 cannot be probed, payment_not_verified_v1",
			func(in *caseInput) {
				dual(in)
				in.LintResult.Entries[1].Errors = 1
				in.LintResult.Findings = []lintFinding{finding("v1-amount", "error", "body", ptr(0), "accepts[0].maxAmountRequired")}
				in.LintResult.Conforms = false
				in.seller = byDialect(svmSeller("honest"), evmSeller("honest"))
			}),
		mk("stop-dual-dialect-v2-fail-open-v1-selected", "the v2 leg is broken (v1 selected) and serves any PAYMENT-SIGNATURE: P2 in v2 FAIL-OPEN",
			func(in *caseInput) {
				dual(in)
				in.LintResult.Findings = []lintFinding{finding("x402-version", "error", "header", nil, "x402Version")}
				in.LintResult.Conforms = false
				in.seller = byDialect(nil, evmSeller("honest"))
			}),
	)
	return out
}
