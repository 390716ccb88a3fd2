package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

func TestIsDigest(t *testing.T) {
	for s, want := range map[string]bool{
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef":  true,
		"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef":  false,
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde":   false,
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0": false,
		"pv-0123456789abcdef": false,
		"":                    false,
	} {
		if got := store.IsDigest(s); got != want {
			t.Errorf("IsDigest(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestEntryOpIsTheOneOpFieldSet(t *testing.T) {
	for name, tc := range map[string]struct {
		e    store.Entry
		want store.Op
	}{
		"check":     {store.Entry{Check: &store.CheckFields{}}, store.OpCheck},
		"memo":      {store.Entry{Memo: &store.MemoFields{}}, store.OpMemo},
		"probe":     {store.Entry{Probe: &store.ProbeFields{}}, store.OpProbe},
		"preflight": {store.Entry{Preflight: &store.PreflightFields{}}, store.OpPreflight},
		"lint":      {store.Entry{Lint: &store.LintFields{}}, store.OpLint},
		"none":      {store.Entry{}, ""},
		"two":       {store.Entry{Check: &store.CheckFields{}, Probe: &store.ProbeFields{}}, ""},
	} {
		if got := tc.e.Op(); got != tc.want {
			t.Errorf("%s: Op() = %q, want %q", name, got, tc.want)
		}
	}
}

func TestEntryDayIsTheUTCDate(t *testing.T) {
	e := store.Entry{Timestamp: time.Date(2026, 3, 2, 20, 30, 0, 0, time.FixedZone("EST", -5*3600))}
	if got := e.Day(); got != "2026-03-03" {
		t.Errorf("Day() = %q, want 2026-03-03", got)
	}
}

func TestEntryValidateCADBlock(t *testing.T) {
	base := store.Entry{
		PayerWallet: "w", Timestamp: time.Unix(1, 0), PaymentTx: "tx", PaymentNetwork: "eip155:8453", CriteriaVersion: "1.0.0",
		VerdictLine: "v", Check: &store.CheckFields{}, CAD: store.CAD{Basis: "b", Pending: true},
	}
	filled := base
	filled.CAD = store.CAD{Basis: "b", Rate: "1.3643", RateDate: "2026-03-02"}
	noDate := filled
	noDate.CAD.RateDate = ""
	noBasis := base
	noBasis.CAD.Basis = ""
	for name, tc := range map[string]struct {
		e    store.Entry
		want error
	}{
		"pending without a rate": {base, nil},
		"filled":                 {filled, nil},
		"rate without its date":  {noDate, store.ErrInvalidEntry},
		"no basis":               {noBasis, store.ErrInvalidEntry},
	} {
		if err := tc.e.Validate(); !errors.Is(err, tc.want) {
			t.Errorf("%s: Validate() = %v, want %v", name, err, tc.want)
		}
	}
}

// TestEntryValidateOwnFields: the preflight and lint fields hold closed
// values only: a decision word, reason codes, counts.
func TestEntryValidateOwnFields(t *testing.T) {
	base := store.Entry{
		PayerWallet: "w", Timestamp: time.Unix(1, 0), PaymentTx: "tx", PaymentNetwork: "eip155:8453", CriteriaVersion: "x402-preflight/v1@2",
		VerdictLine: "v", CAD: store.CAD{Basis: "b", Pending: true},
	}
	pre := func(decision, reasons string) store.Entry {
		e := base
		e.Preflight = &store.PreflightFields{Decision: decision, Reasons: reasons}
		return e
	}
	lint := func(errs, warns int) store.Entry {
		e := base
		e.Lint = &store.LintFields{ErrorsCount: errs, WarningsCount: warns}
		return e
	}
	for name, tc := range map[string]struct {
		e    store.Entry
		want error
	}{
		"GO, no reasons":              {pre("GO", ""), nil},
		"HOLD, two codes":             {pre("HOLD", "challenge_static lint_warnings"), nil},
		"STOP, one code":              {pre("STOP", "fail_open"), nil},
		"another decision word":       {pre("MAYBE", ""), store.ErrInvalidEntry},
		"lowercase decision":          {pre("go", ""), store.ErrInvalidEntry},
		"a URL in the reasons":        {pre("STOP", "https://seller.example/"), store.ErrInvalidEntry},
		"two spaces between codes":    {pre("HOLD", "a  b"), store.ErrInvalidEntry},
		"a trailing space":            {pre("HOLD", "a "), store.ErrInvalidEntry},
		"reasons over 512 bytes":      {pre("HOLD", strings.Repeat("a", 513)), store.ErrInvalidEntry},
		"reasons of exactly 512":      {pre("HOLD", strings.Repeat("a", 512)), nil},
		"lint counts":                 {lint(1, 2), nil},
		"lint negative error count":   {lint(-1, 0), store.ErrInvalidEntry},
		"lint negative warning count": {lint(0, -1), store.ErrInvalidEntry},
	} {
		if err := tc.e.Validate(); !errors.Is(err, tc.want) {
			t.Errorf("%s: Validate() = %v, want %v", name, err, tc.want)
		}
	}
}

func TestIsRate(t *testing.T) {
	for s, want := range map[string]bool{
		"1.3643": true, "10000": true, "0.5": true,
		"": false, ".5": false, "1.": false, "-1": false, "1e3": false, "1.2.3": false, " 1": false,
		"https://a.example/": false, "123456789012345678901234567890123": false,
	} {
		if got := store.IsRate(s); got != want {
			t.Errorf("IsRate(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestRefundValidate(t *testing.T) {
	ok := store.Refund{Op: store.OpCheck, EntryID: "e", Tx: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb", Time: time.Unix(1, 0)}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid refund: %v", err)
	}
	for name, mutate := range map[string]func(*store.Refund){
		"URL tx":   func(r *store.Refund) { r.Tx = "https://a.example/x" },
		"0 in tx":  func(r *store.Refund) { r.Tx = "0OIl" },
		"no entry": func(r *store.Refund) { r.EntryID = "" },
		"bad op":   func(r *store.Refund) { r.Op = "scan" },
		"no time":  func(r *store.Refund) { r.Time = time.Time{} },
	} {
		r := ok
		mutate(&r)
		if err := r.Validate(); !errors.Is(err, store.ErrInvalidRefund) {
			t.Errorf("%s: %v, want ErrInvalidRefund", name, err)
		}
	}
}

// TestObservationNetwork: an observation's network is empty or a CAIP-2
// chain id (lint's grammar), at its edges.
func TestObservationNetwork(t *testing.T) {
	for n, want := range map[string]bool{
		"":            true,
		"eip155:8453": true,
		"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": true,
		"abc:1":                             true,
		"ab:1":                              false, // namespace under 3
		"abcdefgh:1":                        true,  // namespace 8
		"abcdefghi:1":                       false, // namespace 9
		"eip155:":                           false,
		"eip155:" + strings.Repeat("1", 32): true, // 41 characters, the column's cap
		"eip155:" + strings.Repeat("1", 33): false,
		"EIP155:1":                          false,
		"base":                              false, // a v1 name is not CAIP-2
		"eip155:84 53":                      false,
		"eip155:1:2":                        false,
	} {
		o := store.Observation{Endpoint: "e", Op: "preflight", At: time.Unix(1, 0), State: "GO", Network: n}
		if got := o.Validate() == nil; got != want {
			t.Errorf("network %q: valid %v, want %v", n, got, want)
		}
	}
}
