package reliability

import "time"

// Action is what a decision tells the calling flow to do.
type Action string

// The actions. None of them authorises payment.
const (
	Favourable Action = "favourable"  // the reliability signal is favourable
	Warn       Action = "warn"        // proceed with caution; surface the reason
	DoNotCall  Action = "do_not_call" // do not call the endpoint
	Unverified Action = "unverified"  // no usable signal: not monitored, invalid, unbound or stale
)

// Rule names the row of the decision table that decided.
type Rule string

// The rows of the skill's decision table, in its order, then the two rows we
// add for records the table leaves undecided.
const (
	RuleNotUsable          Rule = "validation_or_binding_failed"
	RuleCriticalOrIncident Rule = "critical_or_active_incident"
	RulePaidDeliveryLow    Rule = "paid_delivery_below_95"
	RuleDegraded           Rule = "degraded"
	RuleStale              Rule = "stale"
	RuleFavourable         Rule = "operational_paid_delivery_98"
	RuleNotMonitored       Rule = "not_monitored"
	// Not in the skill's table: the reading in docs/reliability.md.
	RuleStatusUnknown   Rule = "status_unknown"
	RuleBelowFavourable Rule = "below_favourable"
)

// Thresholds of the decision table.
const (
	WarnBelowPercent      = 95.0
	FavourableFromPercent = 98.0
)

// Assessment is everything gathered about one record before deciding.
type Assessment struct {
	// NotFound is true when the API answered 404: the service is not monitored.
	NotFound bool
	// Record is the validated record; nil when no record validated.
	Record *Record
	// Findings are every response, validation, challenge and binding finding.
	Findings []Finding
}

// usable reports whether the record passed validation and binding.
func (a Assessment) usable() bool { return !a.NotFound && a.Record != nil && len(a.Findings) == 0 }

// Decision is the outcome of the decision table.
type Decision struct {
	Action Action `json:"action"`
	Rule   Rule   `json:"rule"`
}

type row struct {
	rule   Rule
	action Action
	holds  func(a Assessment, now time.Time) bool
}

// table is the skill's decision table, in its order: the first row that holds
// decides. Rows after the first read the record only when it is usable.
var table = []row{
	{RuleNotUsable, Unverified, func(a Assessment, _ time.Time) bool {
		return !a.NotFound && !a.usable()
	}},
	{RuleCriticalOrIncident, DoNotCall, func(a Assessment, _ time.Time) bool {
		return a.usable() && (a.Record.Status == StatusCritical || a.Record.ActiveIncident != nil)
	}},
	{RulePaidDeliveryLow, Warn, func(a Assessment, _ time.Time) bool {
		return a.usable() && a.Record.PaidDeliveryPercent < WarnBelowPercent
	}},
	{RuleDegraded, Warn, func(a Assessment, _ time.Time) bool {
		return a.usable() && a.Record.Status == StatusDegraded
	}},
	{RuleStale, Unverified, func(a Assessment, now time.Time) bool {
		return a.usable() && now.Sub(a.Record.LastVerifiedAt) > MaxAge
	}},
	{RuleFavourable, Favourable, func(a Assessment, _ time.Time) bool {
		return a.usable() && a.Record.Status == StatusOperational && a.Record.PaidDeliveryPercent >= FavourableFromPercent
	}},
	{RuleNotMonitored, Unverified, func(a Assessment, _ time.Time) bool {
		return a.NotFound
	}},
	// The skill's table ends here. A usable record it leaves undecided is
	// either status unknown (CORTX itself has no verdict) or operational with
	// paid delivery in [95, 98): neither is favourable.
	{RuleStatusUnknown, Unverified, func(a Assessment, _ time.Time) bool {
		return a.usable() && a.Record.Status == StatusUnknown
	}},
}

// Decide applies the decision table to an assessment at time now.
func Decide(a Assessment, now time.Time) Decision {
	for _, r := range table {
		if r.holds(a, now) {
			return Decision{Action: r.action, Rule: r.rule}
		}
	}
	return Decision{Action: Warn, Rule: RuleBelowFavourable}
}
