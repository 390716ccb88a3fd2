package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The networks the suite records payments on (CAIP-2).
const (
	SolanaMainnet = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	BaseMainnet   = "eip155:8453"
)

// evmTests are the guarantees of payments on an EVM network (issue 25):
// the ledger keeps each entry's network and EVM transaction hash, the
// settlement record and refunds take EVM transaction hashes, and the
// tripwires' tallies count sales of both networks.
var evmTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"evm/entry_keeps_its_network_and_hash_through_the_cad_fill", testEVMEntry},
	{"evm/entry_without_a_network_is_refused", testEntryNeedsNetwork},
	{"evm/settlement_of_an_evm_transaction", testEVMSettlement},
	{"evm/refund_by_an_evm_transaction", testEVMRefund},
	{"evm/sales_of_both_networks_are_tallied", testTalliesBothNetworks},
}

// evmHash is a fresh EVM transaction hash.
func evmHash() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "0x" + hex.EncodeToString(b)
}

// evmClaim is a claim of a fresh facilitator-rail payment on Base.
func evmClaim(op store.Op, now time.Time) store.Claim {
	c := newClaim(op, now)
	c.Rail, c.Tx, c.Payer, c.FeeLamports = "facilitator", evmHash(), "0x857b06519E91e3A54538791bDbb0E22373e36b66", 0
	return c
}

// deliverEVM claims and delivers an EVM payment of op at now.
func deliverEVM(t *testing.T, s store.Store, op store.Op, now time.Time) store.Entry {
	t.Helper()
	c := evmClaim(op, now)
	e := entryFor(c)
	e.PaymentNetwork = BaseMainnet
	deliver(t, s, claim(t, s, c), e)
	return e
}

func testEVMEntry(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := deliverEVM(t, s, store.OpProbe, t0)
	got, err := s.Entries(ctx, store.OpProbe, allFrom, allTo)
	if err != nil || len(got) != 1 {
		t.Fatalf("Entries: %v %d", err, len(got))
	}
	e := got[0]
	if e.PaymentTx != want.PaymentTx || e.PaymentNetwork != BaseMainnet || e.SolanaFeeLamports != 0 || e.PayerWallet != want.PayerWallet {
		t.Errorf("entry %+v", e)
	}
	pending, err := s.PendingEntries(ctx, store.OpProbe)
	if err != nil || len(pending) != 1 || pending[0].PaymentNetwork != BaseMainnet {
		t.Fatalf("PendingEntries: %v %+v", err, pending)
	}
	if ok, err := s.FillCAD(ctx, store.OpProbe, e.ID, "1.3643", "2026-03-02"); !ok || err != nil {
		t.Fatalf("FillCAD: %v %v", ok, err)
	}
	got, _ = s.Entries(ctx, store.OpProbe, allFrom, allTo)
	if got[0].PaymentNetwork != BaseMainnet || got[0].PaymentTx != want.PaymentTx || got[0].CAD.Rate != "1.3643" {
		t.Errorf("after the fill: %+v", got[0])
	}
}

func testEntryNeedsNetwork(t *testing.T, s store.Store) {
	for name, network := range map[string]string{"none": "", "free text": "Base mainnet", "a URL": "https://x.example/", "no reference": "eip155:"} {
		c := evmClaim(store.OpCheck, t0)
		r := claim(t, s, c)
		e := entryFor(c)
		e.PaymentNetwork = network
		if err := s.Deliver(context.Background(), r.PaymentID, r.LeaseToken, e); !errors.Is(err, store.ErrInvalidEntry) {
			t.Errorf("%s: Deliver = %v, want ErrInvalidEntry", name, err)
		}
	}
	if es, _ := s.Entries(context.Background(), store.OpCheck, allFrom, allTo); len(es) != 0 {
		t.Errorf("%d entries written", len(es))
	}
}

func testEVMSettlement(t *testing.T, s store.Store) {
	ctx := context.Background()
	key, hash := payloadKey(), evmHash()
	r := mustTake(t, s, store.OpMemo, key, t0, store.SettleFresh)
	if err := s.MarkSettlementSent(ctx, store.OpMemo, key, r.LeaseToken); err != nil {
		t.Fatal(err)
	}
	payer := "0x857b06519E91e3A54538791bDbb0E22373e36b66"
	if err := s.FinishSettlement(ctx, store.OpMemo, key, r.LeaseToken,
		store.SettlementResult{State: store.SettlementSettled, Tx: "0xnot-a-hash", Payer: payer}); !errors.Is(err, store.ErrInvalidSettlement) {
		t.Errorf("a settlement of no transaction hash: %v", err)
	}
	finish(t, s, store.OpMemo, key, r.LeaseToken, store.SettlementResult{State: store.SettlementSettled, Tx: hash, Payer: payer})
	if ok, err := s.ConfirmSettlement(ctx, store.OpMemo, key, hash, 0); !ok || err != nil {
		t.Fatalf("ConfirmSettlement: %v %v", ok, err)
	}
	done := mustTake(t, s, store.OpMemo, key, t0.Add(time.Second), store.SettleDone)
	want := store.Settlement{Op: store.OpMemo, Key: key, State: store.SettlementSettled, Tx: hash, Payer: payer, Confirmed: true}
	if done.Settlement != want {
		t.Errorf("settlement %+v, want %+v", done.Settlement, want)
	}
}

func testEVMRefund(t *testing.T, s store.Store) {
	ctx := context.Background()
	e := deliverEVM(t, s, store.OpCheck, t0)
	es, _ := s.Entries(ctx, store.OpCheck, allFrom, allTo)
	for _, bad := range []string{"0x1234", "0x" + e.PaymentTx[2:] + "00", "0xZZ" + e.PaymentTx[4:]} {
		if _, err := s.AddRefund(ctx, store.Refund{Op: store.OpCheck, EntryID: es[0].ID, Tx: bad, Time: t0.Add(time.Hour)}); !errors.Is(err, store.ErrInvalidRefund) {
			t.Errorf("refund tx %q: %v", bad, err)
		}
	}
	refundTx := evmHash()
	if _, err := s.AddRefund(ctx, store.Refund{Op: store.OpCheck, EntryID: es[0].ID, Tx: refundTx, Time: t0.Add(time.Hour)}); err != nil {
		t.Fatalf("AddRefund: %v", err)
	}
	rs, err := s.Refunds(ctx, allFrom, allTo)
	if err != nil || len(rs) != 1 || rs[0].Tx != refundTx {
		t.Errorf("refunds %v %+v", err, rs)
	}
}

func testTalliesBothNetworks(t *testing.T, s store.Store) {
	deliverEVM(t, s, store.OpCheck, t0)
	c := newClaim(store.OpCheck, t0.Add(time.Minute))
	deliver(t, s, claim(t, s, c), entryFor(c))
	tl, err := s.Tallies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := tl.Sales[store.OpCheck]; len(got) != 1 || got[0].Count != 2 {
		t.Errorf("sales %+v, want 2 on one day (one on each network)", got)
	}
}
