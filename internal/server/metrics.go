package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exchangerebel/payability/internal/ledger"
)

// metrics are the service's Prometheus series. Label values come only from
// closed sets (routes, outcomes, states, grades, rails, refusal codes): never
// a URL, a payer, a memo or any fetched content.
type metrics struct {
	requests      *prometheus.CounterVec
	verdicts      *prometheus.CounterVec
	grades        *prometheus.CounterVec
	payments      *prometheus.CounterVec
	free          *prometheus.CounterVec
	fetchDuration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_requests_total",
			Help: "HTTP requests by route and outcome.",
		}, []string{"route", "outcome"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_verdicts_total",
			Help: "Delivered verdicts of the check and memo ops by state.",
		}, []string{"op", "state"}),
		grades: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_probe_grades_total",
			Help: "Delivered rail-probe grades by rail and grade.",
		}, []string{"rail", "grade"}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_payments_total",
			Help: "Payment presentations by rail and outcome (paid, resumed, or a refusal code).",
		}, []string{"rail", "outcome"}),
		free: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payability_free_prechecks_total",
			Help: "Free pre-checks by service and outcome (allowed, daily_limit, min_interval, rate_limited).",
		}, []string{"service", "outcome"}),
		fetchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "payability_op_duration_seconds",
			Help:    "Duration of the fetches and grading of a paid op.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40},
		}, []string{"op"}),
	}
	reg.MustRegister(m.requests, m.verdicts, m.grades, m.payments, m.free, m.fetchDuration)
	return m
}

// registerLedgerMetrics exposes the ledger's tripwire figures (refund ratio,
// free-to-paid ratio, the corpus guard, Day-0) as gauges computed from the
// store on scrape, so an alert can fire on them.
func registerLedgerMetrics(reg prometheus.Registerer, cfg Config) {
	if cfg.Store == nil {
		return
	}
	corpus := map[string]bool{}
	for _, svc := range ledger.Services {
		corpus[svc.Name] = cfg.ReadyCorpus
	}
	reg.MustRegister(ledger.NewCollector(cfg.Store, ledger.CollectorOptions{Now: cfg.Now, CorpusPasses: corpus}))
}
