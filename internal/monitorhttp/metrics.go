package monitorhttp

import (
	"context"
	"maps"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

// Metrics are the monitor's Prometheus metrics. Every label value is a
// configuration id (endpoint, a webhook's id or key) or a word of a closed set
// (op, outcome, status, result): never a URL or a fetched value.
type Metrics struct {
	duration *prometheus.HistogramVec
	webhooks *prometheus.CounterVec
	skipped  *prometheus.CounterVec
	lag      *prometheus.GaugeVec
}

// NewMetrics registers the monitor's metrics on reg: the outcome and status
// state sets and the last check time are read from the history at each
// scrape (so every instance of a cluster shows the same), the durations and
// webhook results are counted by the instance that ran them.
func NewMetrics(reg prometheus.Registerer, m *monitor.Monitor) *Metrics {
	x := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "payability_monitor_check_duration_seconds",
			Help:    "How long one scheduled check took, by endpoint id and op (this instance's checks).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"endpoint", "op"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_monitor_webhook_deliveries_total",
			Help: "Webhook delivery attempts by webhook (its configuration id, else its receiver key) and result: delivered, retry, gave_up, dropped (the receiver left the configuration while the delivery was pending).",
		}, []string{"webhook", "result"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_monitor_checks_skipped_total",
			Help: "Checks this instance skipped, by op, because they started a period or more after they were due (the backlog exceeded a period: add workers or instances).",
		}, []string{"op"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "payability_monitor_check_lag_seconds",
			Help: "How late, by op, the last check this instance started was after its due time (the backlog: near 0 when the instance keeps up).",
		}, []string{"op"}),
	}
	reg.MustRegister(x.duration, x.webhooks, x.skipped, x.lag, &stateCollector{m: m})
	return x
}

// Recorded observes one recorded check (Monitor.Recorded).
func (x *Metrics) Recorded(o store.Observation) {
	x.duration.WithLabelValues(o.Endpoint, o.Op).Observe(float64(o.DurationMS) / 1000)
}

// Skipped counts one check skipped for being a period late
// (schedule.Options.Skipped).
func (x *Metrics) Skipped(op string) { x.skipped.WithLabelValues(op).Inc() }

// Lag sets how late the last check of op started (schedule.Options.Lag).
func (x *Metrics) Lag(op string, late time.Duration) { x.lag.WithLabelValues(op).Set(late.Seconds()) }

// Delivery counts one webhook delivery attempt (schedule.Options.DeliveryResult).
func (x *Metrics) Delivery(webhook, result string) {
	x.webhooks.WithLabelValues(webhook, result).Inc()
}

var (
	outcomeDesc = prometheus.NewDesc("payability_monitor_outcome",
		"The current outcome of an endpoint's op as a state set: 1 for the state it is in (unknown: not observed within two intervals).",
		[]string{"endpoint", "op", "outcome"}, nil)
	statusDesc = prometheus.NewDesc("payability_monitor_status",
		"An endpoint's status as a state set: operational, degraded, critical, unknown.",
		[]string{"endpoint", "status"}, nil)
	lastCheckDesc = prometheus.NewDesc("payability_monitor_last_check_timestamp_seconds",
		"When an endpoint's op was last checked (Unix seconds); absent until its first check.",
		[]string{"endpoint", "op"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("payability_monitor_history_read_errors",
		"1 when the history could not be read for this scrape.", nil, nil)
)

var outcomes = []string{string(monitor.Passing), string(monitor.Failing), "unknown"}
var statuses = []monitor.Status{monitor.Operational, monitor.Degraded, monitor.Critical, monitor.Unknown}

type stateCollector struct{ m *monitor.Monitor }

// metricsPage is how many endpoints a scrape reads at a time.
const metricsPage = 1000

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- outcomeDesc
	ch <- statusDesc
	ch <- lastCheckDesc
	ch <- scrapeErrorDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	failed := 0.0
	now := c.m.NowTime()
	// The active endpoints, a page at a time with their newest
	// observations (two reads a page).
	var eps []monitor.Endpoint
	byID := map[string]map[string]store.Observation{}
	for off := 0; ; off += metricsPage {
		page, _, err := c.m.Endpoints(ctx, monitor.Query{Offset: off, Limit: metricsPage})
		if err == nil {
			var l map[string]map[string]store.Observation
			if l, err = c.m.LatestOf(ctx, page); err == nil {
				maps.Copy(byID, l)
			}
		}
		if err != nil {
			failed = 1
			break
		}
		eps = append(eps, page...)
		if len(page) < metricsPage {
			break
		}
	}
	for _, e := range eps {
		latest := byID[e.ID]
		for _, op := range e.Ops {
			o, ok := latest[op]
			cur := "unknown"
			if ok && monitor.Fresh(e, o, now) {
				cur = string(monitor.OutcomeOf(o))
			}
			for _, s := range outcomes {
				ch <- prometheus.MustNewConstMetric(outcomeDesc, prometheus.GaugeValue, b2f(s == cur), e.ID, op, s)
			}
			if ok {
				ch <- prometheus.MustNewConstMetric(lastCheckDesc, prometheus.GaugeValue, float64(o.At.UnixMilli())/1000, e.ID, op)
			}
		}
		st := c.m.StatusNow(e, latest)
		for _, s := range statuses {
			ch <- prometheus.MustNewConstMetric(statusDesc, prometheus.GaugeValue, b2f(s == st), e.ID, string(s))
		}
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// probe answers a blackbox-exporter-style scrape for one configured
// endpoint id (target) and op (module), from the history: probe_success is 1
// when the op's latest observation is fresh and passing, probe_duration_seconds
// is how long that check took. It never fetches anything and names no URL:
// an id that is not configured is refused, so it is no proxy to anywhere.
func (h *Handler) probe(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, op := q.Get("target"), q.Get("module")
	if id == "" || op == "" {
		http.Error(w, "target (an endpoint id) and module (an op) are required", http.StatusBadRequest)
		return
	}
	e, ok, err := h.cfg.Monitor.Endpoint(r.Context(), id)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if !ok {
		http.Error(w, "unknown target: not an endpoint id of the configuration", http.StatusNotFound)
		return
	}
	if !e.Has(op) {
		http.Error(w, "unknown module: not an op of this endpoint", http.StatusBadRequest)
		return
	}
	o, seen, err := h.cfg.Monitor.History.LatestObservation(r.Context(), id, op)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	reg := prometheus.NewRegistry() // a fresh registry per probe
	success := prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe_success", Help: "1 when the op's latest observation is fresh and passing."})
	dur := prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe_duration_seconds", Help: "How long the op's latest check took."})
	reg.MustRegister(success, dur)
	if seen {
		success.Set(b2f(o.Passing && monitor.Fresh(e, o, h.cfg.Monitor.NowTime())))
		dur.Set(float64(o.DurationMS) / 1000)
	}
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
