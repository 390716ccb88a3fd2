package ledger

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/store"
)

// gather returns every sample as "name{label=value,…}" → value.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestCollectorExposesTheTripwires(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	now := day("2026-06-30T12:00:00Z")
	reg := prometheus.NewRegistry()
	c := NewCollector(st, CollectorOptions{
		Now:          func() time.Time { return now },
		CorpusPasses: map[string]bool{criteria.ServicePayability: true, criteria.ServiceRailProbe: false},
		MaxAge:       -1,
	})
	reg.MustRegister(c)

	// Before any sale.
	got := gather(t, reg)
	for k, want := range map[string]float64{
		"payability_ledger_figures_up{}":                                         1,
		"payability_day0_set{service=payability-verdict}":                        0,
		"payability_corpus_passing{service=payability-verdict}":                  1,
		"payability_corpus_passing{service=rail-probe}":                          0,
		"payability_tripwire_fired{service=rail-probe,tripwire=corpus}":          1,
		"payability_tripwire_fired{service=payability-verdict,tripwire=refunds}": 0,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	if _, ok := got["payability_day0_timestamp_seconds{service=payability-verdict}"]; ok {
		t.Errorf("a Day-0 time before any sale")
	}

	// A house proof, then 20 outside sales, 2 refunds and 30 free calls.
	deliver(t, st, delivery{op: store.OpCheck, at: day("2026-06-01T08:00:00Z"), house: true})
	var sold []store.Entry
	for i := range 20 {
		sold = append(sold, deliver(t, st, delivery{op: store.OpCheck, at: day("2026-06-10T09:00:00Z").Add(time.Duration(i) * time.Minute)}))
	}
	for _, e := range sold[:2] {
		if _, err := Refund(ctx, st, "", e.ID, signature(), day("2026-06-12T00:00:00Z")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		if _, err := st.TakeFree(ctx, "payability-verdict|wallet:w", day("2026-06-11T00:00:00Z").Add(time.Duration(i)*time.Minute), 100, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	got = gather(t, reg)
	for k, want := range map[string]float64{
		"payability_day0_set{service=payability-verdict}":                          1,
		"payability_day0_timestamp_seconds{service=payability-verdict}":            float64(day("2026-06-10T09:00:00Z").Unix()),
		"payability_day0_set{service=rail-probe}":                                  0,
		"payability_refund_ratio{service=payability-verdict,window=current}":       0.1,
		"payability_refund_ratio{service=payability-verdict,window=worst}":         0.1,
		"payability_free_to_paid_ratio{service=payability-verdict,window=current}": 1.5,
		"payability_tripwire_fired{service=payability-verdict,tripwire=refunds}":   1,
		"payability_tripwire_fired{service=payability-verdict,tripwire=free_use}":  0,
		"payability_refund_ratio{service=rail-probe,window=current}":               0,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}

	// Free use with no sale in the window: +Inf, and it fires.
	now = day("2026-08-30T12:00:00Z")
	if _, err := st.TakeFree(ctx, "payability-verdict|wallet:w", day("2026-08-30T00:00:00Z"), 100, time.Second); err != nil {
		t.Fatal(err)
	}
	got = gather(t, reg)
	if v := got["payability_free_to_paid_ratio{service=payability-verdict,window=current}"]; !math.IsInf(v, 1) {
		t.Errorf("free-to-paid with no paid call = %v, want +Inf", v)
	}
}

// brokenStore fails every tally: the figures are reported down, the scrape
// still succeeds, and no store error text reaches the metrics.
type brokenStore struct{ store.Store }

func (brokenStore) Tallies(context.Context) (store.Tallies, error) {
	return store.Tallies{}, context.DeadlineExceeded
}

func TestCollectorReportsAStoreFailureAsDown(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(brokenStore{}, CollectorOptions{MaxAge: -1}))
	got := gather(t, reg)
	if v, ok := got["payability_ledger_figures_up{}"]; !ok || v != 0 {
		t.Errorf("figures_up = %v, want 0", v)
	}
	for k := range got {
		if strings.HasPrefix(k, "payability_refund_ratio") || strings.HasPrefix(k, "payability_day0") {
			t.Errorf("%s exposed without figures", k)
		}
	}
}

func TestCollectorReusesFiguresWithinMaxAge(t *testing.T) {
	st := &countingStore{Store: openStore(t)}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(st, CollectorOptions{MaxAge: time.Hour}))
	for range 5 {
		gather(t, reg)
	}
	if st.n != 1 {
		t.Errorf("%d tallies for 5 scrapes, want 1", st.n)
	}
}

type countingStore struct {
	store.Store
	n int
}

func (c *countingStore) Tallies(ctx context.Context) (store.Tallies, error) {
	c.n++
	return c.Store.Tallies(ctx)
}
