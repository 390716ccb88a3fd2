package ledger

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exchangerebel/payability/internal/store"
)

// Collector exposes the tripwires as Prometheus gauges, so an alert can fire
// on them. It computes them from the store on scrape, at most once per
// MaxAge (/metrics is public: a scrape flood must not become a query flood).
// Label values are service and tripwire names only: closed sets.
type Collector struct {
	store  store.Store
	now    func() time.Time
	corpus map[string]bool
	maxAge time.Duration

	mu       sync.Mutex
	cached   Status
	cachedOK bool
	cachedAt time.Time

	up, refundRatio, freeRatio, fired, corpusPassing, day0Set, day0Time *prometheus.Desc
}

// CollectorOptions tune NewCollector.
type CollectorOptions struct {
	// Now is the clock of the windows; nil means time.Now.
	Now func() time.Time
	// CorpusPasses says, per service, whether its graders pass the pinned
	// corpus (the serve-time guard).
	CorpusPasses map[string]bool
	// MaxAge is how long computed figures are reused; 0 means 15 s, a
	// negative value means never reused.
	MaxAge time.Duration
}

// NewCollector returns a collector of st's tripwires.
func NewCollector(st store.Store, o CollectorOptions) *Collector {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxAge == 0 {
		o.MaxAge = 15 * time.Second
	}
	svc := []string{"service"}
	return &Collector{
		store: st, now: o.Now, corpus: o.CorpusPasses, maxAge: o.MaxAge,
		up: prometheus.NewDesc("payability_ledger_figures_up",
			"1 when the tripwire figures below could be computed from the store, 0 when not.", nil, nil),
		refundRatio: prometheus.NewDesc("payability_refund_ratio",
			"Refunds / outside paid calls over 30-day windows from Day-0 (window current: the last 30 days; worst: the highest window). Tripwire above 0.05; +Inf when refunds meet no paid call.",
			[]string{"service", "window"}, nil),
		freeRatio: prometheus.NewDesc("payability_free_to_paid_ratio",
			"Allowed free calls / outside paid calls over 30-day windows from Day-0 (window current or worst). Tripwire above 10; +Inf when free use meets no paid call.",
			[]string{"service", "window"}, nil),
		fired: prometheus.NewDesc("payability_tripwire_fired",
			"1 when the tripwire fired (stop and review): refunds, free_use or corpus.",
			[]string{"service", "tripwire"}, nil),
		corpusPassing: prometheus.NewDesc("payability_corpus_passing",
			"1 when the graders pass 100% of the pinned corpus and paid ops are served, 0 when paid ops are refused.", svc, nil),
		day0Set: prometheus.NewDesc("payability_day0_set",
			"1 once the service has an outside (non-house) paid settlement: Day-0 of the criteria.", svc, nil),
		day0Time: prometheus.NewDesc("payability_day0_timestamp_seconds",
			"The time of Day-0, the first outside paid settlement (present once set).", svc, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.refundRatio, c.freeRatio, c.fired, c.corpusPassing, c.day0Set, c.day0Time} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, svc := range Services {
		gauge(c.corpusPassing, b2f(c.corpus[svc.Name]), svc.Name)
	}
	if !ok {
		gauge(c.up, 0)
		return
	}
	gauge(c.up, 1)
	for _, svc := range s.Services {
		gauge(c.day0Set, b2f(svc.Day0 != nil), svc.Service)
		if svc.Day0 != nil {
			gauge(c.day0Time, float64(svc.Day0.UnixMilli())/1000, svc.Service)
		}
		for _, t := range svc.Tripwires {
			gauge(c.fired, b2f(t.Fired), svc.Service, t.Name)
			d := c.refundRatio
			switch t.Name {
			case TripFreeUse:
				d = c.freeRatio
			case TripCorpus:
				continue
			}
			if t.Current != nil {
				gauge(d, t.Current.Ratio(), svc.Service, "current")
			}
			if t.Worst != nil {
				gauge(d, t.Worst.Ratio(), svc.Service, "worst")
			}
		}
	}
}

// status returns the figures, computing them when the cached ones are older
// than maxAge.
func (c *Collector) status() (Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.maxAge > 0 && !c.cachedAt.IsZero() && now.Sub(c.cachedAt) < c.maxAge {
		return c.cached, c.cachedOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t, err := c.store.Tallies(ctx)
	c.cachedAt, c.cachedOK = now, err == nil
	if err == nil {
		c.cached = Evaluate(t, c.corpus, c.now())
	}
	return c.cached, c.cachedOK
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
