package reliability

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	rec := func(status Status, delivery float64, mods ...func(*Record)) *Record {
		r := &Record{Status: status, PaidDeliveryPercent: delivery, UptimePercent: 100, SchemaValidityPercent: 100, LastVerifiedAt: verified}
		for _, m := range mods {
			m(r)
		}
		return r
	}
	incident := func(r *Record) {
		r.ActiveIncident = &Incident{Severity: "high", FailureStage: "delivery", OpenedAt: verified}
	}
	stale := func(r *Record) { r.LastVerifiedAt = checkTime.Add(-61 * time.Minute) }
	bad := []Finding{{StageBinding, FieldEndpointURL, CodeMismatch}}
	tests := []struct {
		name string
		a    Assessment
		want Decision
	}{
		// Row 1: validation or binding failed, whatever the record says.
		{"binding failed", Assessment{Record: rec(StatusOperational, 100), Findings: bad}, Decision{Unverified, RuleNotUsable}},
		{"binding failed beats critical", Assessment{Record: rec(StatusCritical, 10, incident), Findings: bad}, Decision{Unverified, RuleNotUsable}},
		{"no record validated", Assessment{Findings: []Finding{{StageValidation, FieldResponse, CodeUnparseable}}}, Decision{Unverified, RuleNotUsable}},
		{"fetch failed", Assessment{Findings: []Finding{{StageResponse, FieldResponse, CodeOverCap}}}, Decision{Unverified, RuleNotUsable}},
		{"no record and no findings", Assessment{}, Decision{Unverified, RuleNotUsable}},
		// Row 2: critical or an active incident.
		{"critical", Assessment{Record: rec(StatusCritical, 99)}, Decision{DoNotCall, RuleCriticalOrIncident}},
		{"operational with an incident", Assessment{Record: rec(StatusOperational, 100, incident)}, Decision{DoNotCall, RuleCriticalOrIncident}},
		{"critical beats low delivery", Assessment{Record: rec(StatusCritical, 10)}, Decision{DoNotCall, RuleCriticalOrIncident}},
		{"incident beats stale", Assessment{Record: rec(StatusOperational, 100, incident, stale)}, Decision{DoNotCall, RuleCriticalOrIncident}},
		// Row 3: paid delivery below 95.
		{"delivery 94.99", Assessment{Record: rec(StatusOperational, 94.99)}, Decision{Warn, RulePaidDeliveryLow}},
		{"degraded with low delivery", Assessment{Record: rec(StatusDegraded, 50)}, Decision{Warn, RulePaidDeliveryLow}},
		{"unknown with low delivery", Assessment{Record: rec(StatusUnknown, 0)}, Decision{Warn, RulePaidDeliveryLow}},
		// Row 4: degraded.
		{"degraded", Assessment{Record: rec(StatusDegraded, 99)}, Decision{Warn, RuleDegraded}},
		// Row 5: stale (Bind reports it first when the client runs; Decide holds it too).
		{"stale", Assessment{Record: rec(StatusOperational, 100, stale)}, Decision{Unverified, RuleStale}},
		// Row 6: favourable.
		{"operational at 98", Assessment{Record: rec(StatusOperational, 98)}, Decision{Favourable, RuleFavourable}},
		{"operational at 100", Assessment{Record: rec(StatusOperational, 100)}, Decision{Favourable, RuleFavourable}},
		// Row 7: 404.
		{"not monitored", Assessment{NotFound: true}, Decision{Unverified, RuleNotMonitored}},
		// Beyond the table.
		{"status unknown", Assessment{Record: rec(StatusUnknown, 99)}, Decision{Unverified, RuleStatusUnknown}},
		{"operational at 95", Assessment{Record: rec(StatusOperational, 95)}, Decision{Warn, RuleBelowFavourable}},
		{"operational at 97.99", Assessment{Record: rec(StatusOperational, 97.99)}, Decision{Warn, RuleBelowFavourable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.a, checkTime); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}
