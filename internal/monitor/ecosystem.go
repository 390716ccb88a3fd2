package monitor

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/store"
)

// The ecosystem report: what every monitored endpoint's newest preflight
// and lint said, counted by the database and broken down by network,
// scheme, x402 version and source, with the most frequent reason codes and
// rule ids, and the daily counts of states over the retention window.
// Every share carries its count and its denominator; a share of nothing is
// null, never a figure. docs/monitor.md, "The ecosystem report".

// ReportKind names the report's format (a changed format is a new kind).
const ReportKind = "payability-ecosystem-report/v1"

// TopCodes is how many reason codes (or rule ids) an op's report lists.
const TopCodes = 10

// SourceConfig is the source of an endpoint listed by the configuration
// file, SourceAPI of one added through the API (the store's words).
const (
	SourceConfig = store.SourceConfig
	SourceAPI    = store.SourceAPI
)

// SourceOf is the source an observation of e is counted under: one of the
// sources that list e in the store (Endpoint.Sources), the file first,
// then the API, then the first catalog by URL, as SourceLabel writes it;
// an endpoint with no source read (a monitor without a store catalog) is
// the file's.
func SourceOf(e Endpoint) string {
	switch {
	case len(e.Sources) == 0 || slices.Contains(e.Sources, SourceConfig):
		return SourceConfig
	case slices.Contains(e.Sources, SourceAPI):
		return SourceAPI
	}
	return SourceLabel(slices.Min(e.Sources))
}

// SourceLabel is how an observation and the report name a source: config
// and api as they are, a catalog by its host and 12 hex digits of SHA-256
// over its URL (as DeriveID names an endpoint), never its URL, which may
// carry a token and is longer than an id. A valid store id.
func SourceLabel(source string) string {
	if source == SourceConfig || source == SourceAPI {
		return source
	}
	return DeriveID("SOURCE", source)
}

// The words of a breakdown's value that are not the value itself.
const (
	ValueNone  = "none"    // the observation carried no such field
	ValueOther = "other"   // a value outside the closed set a report names
	SourceNone = "unknown" // a row recorded before sources were kept
)

// reportOps are the ops the report counts, each with its states in order
// and what its reasons are.
var reportOps = []struct {
	op, codeKind string
	states       []string
	known        func(string) bool
}{
	{"preflight", "reason_code", []string{PreflightGo, PreflightHold, PreflightStop}, knownPreflightReason},
	{"lint", "rule_id", []string{LintConforms, LintWarnings, LintErrors}, func(id string) bool { _, ok := lint.RuleByID(id); return ok }},
}

func knownPreflightReason(code string) bool {
	r := preflight.Reason(code)
	return slices.Contains(preflight.StopReasons(), r) || slices.Contains(preflight.HoldReasons(), r)
}

// Portion is Count out of Of, and their ratio as a percentage with one
// decimal (a string: a signed document carries integers only), null when
// Of is 0.
type Portion struct {
	Count   int64   `json:"count"`
	Of      int64   `json:"of"`
	Percent *string `json:"percent"`
}

// PortionOf is count out of of.
func PortionOf(count, of int64) Portion {
	s := Portion{Count: count, Of: of}
	if of > 0 {
		tenths := (count*1000 + of/2) / of // rounded half up, integers only
		p := strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10)
		s.Percent = &p
	}
	return s
}

// StateShare is how many of a set were in one state.
type StateShare struct {
	State string `json:"state"`
	Portion
}

// Breakdown is one value of a dimension: its endpoints out of the op's,
// and their states out of its own.
type Breakdown struct {
	Value     string       `json:"value"`
	Endpoints Portion      `json:"endpoints"`
	States    []StateShare `json:"states"`
}

// CodeShare is how many of the op's endpoints' newest observations carry
// one reason code (preflight) or rule id (lint).
type CodeShare struct {
	Code string `json:"code"`
	Portion
}

// OpReport is one op's part of the report: over the endpoints whose newest
// observation of the op is in the window.
type OpReport struct {
	Op            string       `json:"op"`
	Endpoints     int64        `json:"endpoints"`
	States        []StateShare `json:"states"`
	ByNetwork     []Breakdown  `json:"by_network"`
	ByScheme      []Breakdown  `json:"by_scheme"`
	ByX402Version []Breakdown  `json:"by_x402_version"`
	BySource      []Breakdown  `json:"by_source"`
	CodeKind      string       `json:"code_kind"`
	TopCodes      []CodeShare  `json:"top_codes"`
}

// DayOp is one op's checks of one UTC day and their states.
type DayOp struct {
	Op     string       `json:"op"`
	Checks int64        `json:"checks"`
	States []StateShare `json:"states"`
}

// ReportDay is one UTC day of the window.
type ReportDay struct {
	Date string  `json:"date"`
	Ops  []DayOp `json:"ops"`
}

// ReportWindow is the time the report covers: from Since (the retention
// ago) to Until (when it was made); Days whole UTC days are listed.
type ReportWindow struct {
	Since string `json:"since"`
	Until string `json:"until"`
	Days  int    `json:"days"`
}

// EcosystemReport is the whole report, signed when served.
type EcosystemReport struct {
	Kind          string       `json:"kind"`
	Source        string       `json:"source"`
	Version       string       `json:"version"`
	GeneratedAt   string       `json:"generated_at"`
	Window        ReportWindow `json:"window"`
	TopCodesLimit int          `json:"top_codes_limit"`
	Ops           []OpReport   `json:"ops"`
	Daily         []ReportDay  `json:"daily"`
}

// BuildReport reads the store's aggregates and builds the report at now
// over the retention window.
func BuildReport(ctx context.Context, eco store.Ecosystem, now time.Time, retention time.Duration) (EcosystemReport, error) {
	since := now.Add(-retention)
	groups := map[string][]store.LatestGroup{}
	for _, ro := range reportOps {
		g, err := eco.LatestGroups(ctx, ro.op, since)
		if err != nil {
			return EcosystemReport{}, err
		}
		groups[ro.op] = g
	}
	days, err := eco.StateDays(ctx, since)
	if err != nil {
		return EcosystemReport{}, err
	}
	return ReportOf(groups, days, now, retention), nil
}

// ReportOf is the report of the aggregates read (pure).
func ReportOf(groups map[string][]store.LatestGroup, days []store.StateDay, now time.Time, retention time.Duration) EcosystemReport {
	now = now.UTC()
	since := now.Add(-retention)
	first := since.Truncate(24 * time.Hour)
	last := now.Truncate(24 * time.Hour)
	n := int(last.Sub(first)/(24*time.Hour)) + 1
	r := EcosystemReport{
		Kind: ReportKind, Source: "payability", Version: buildinfo.Version, GeneratedAt: criteria.Timestamp(now),
		Window:        ReportWindow{Since: criteria.Timestamp(since), Until: criteria.Timestamp(now), Days: n},
		TopCodesLimit: TopCodes, Ops: []OpReport{}, Daily: []ReportDay{},
	}
	for _, ro := range reportOps {
		r.Ops = append(r.Ops, opReport(ro.op, ro.codeKind, ro.states, ro.known, groups[ro.op]))
	}
	counts := map[string]map[string]map[string]int64{} // date → op → state → checks
	for _, d := range days {
		date := d.Day.UTC().Format(time.DateOnly)
		if counts[date] == nil {
			counts[date] = map[string]map[string]int64{}
		}
		if counts[date][d.Op] == nil {
			counts[date][d.Op] = map[string]int64{}
		}
		counts[date][d.Op][d.State] += d.Checks
	}
	for i := range n {
		date := first.AddDate(0, 0, i).Format(time.DateOnly)
		day := ReportDay{Date: date, Ops: []DayOp{}}
		for _, ro := range reportOps {
			byState := counts[date][ro.op]
			var checks int64
			for _, c := range byState {
				checks += c
			}
			day.Ops = append(day.Ops, DayOp{Op: ro.op, Checks: checks, States: stateShares(ro.states, byState, checks)})
		}
		r.Daily = append(r.Daily, day)
	}
	return r
}

// stateShares are the shares of states (in order) out of total; a state
// outside them is counted as "other", listed only when there is one.
func stateShares(states []string, counts map[string]int64, total int64) []StateShare {
	out := make([]StateShare, 0, len(states)+1)
	var other int64
	for s, c := range counts {
		if !slices.Contains(states, s) {
			other += c
		}
	}
	for _, s := range states {
		out = append(out, StateShare{State: s, Portion: PortionOf(counts[s], total)})
	}
	if other > 0 {
		out = append(out, StateShare{State: ValueOther, Portion: PortionOf(other, total)})
	}
	return out
}

func opReport(op, codeKind string, states []string, known func(string) bool, groups []store.LatestGroup) OpReport {
	r := OpReport{Op: op, CodeKind: codeKind}
	all := map[string]int64{}
	type dim struct {
		value func(store.LatestGroup) string
		dst   *[]Breakdown
	}
	dims := []dim{
		{networkValue, &r.ByNetwork},
		{func(g store.LatestGroup) string { return schemeValue(g.Scheme) }, &r.ByScheme},
		{func(g store.LatestGroup) string { return versionValue(g.X402Version) }, &r.ByX402Version},
		{func(g store.LatestGroup) string { return cmp.Or(g.Source, SourceNone) }, &r.BySource},
	}
	per := make([]map[string]map[string]int64, len(dims)) // dim → value → state → endpoints
	codes := map[string]int64{}
	for i := range per {
		per[i] = map[string]map[string]int64{}
	}
	for _, g := range groups {
		r.Endpoints += g.Endpoints
		all[g.State] += g.Endpoints
		for i, d := range dims {
			v := d.value(g)
			if per[i][v] == nil {
				per[i][v] = map[string]int64{}
			}
			per[i][v][g.State] += g.Endpoints
		}
		seen := map[string]bool{}
		for _, c := range g.Reasons {
			if !known(c) {
				c = ValueOther
			}
			if !seen[c] { // an endpoint counts once per code
				seen[c] = true
				codes[c] += g.Endpoints
			}
		}
	}
	r.States = stateShares(states, all, r.Endpoints)
	for i, d := range dims {
		*d.dst = []Breakdown{}
		for v, byState := range per[i] {
			var n int64
			for _, c := range byState {
				n += c
			}
			*d.dst = append(*d.dst, Breakdown{Value: v, Endpoints: PortionOf(n, r.Endpoints), States: stateShares(states, byState, n)})
		}
		slices.SortFunc(*d.dst, func(a, b Breakdown) int {
			return cmp.Or(cmp.Compare(b.Endpoints.Count, a.Endpoints.Count), cmp.Compare(a.Value, b.Value))
		})
	}
	r.TopCodes = []CodeShare{}
	for c, n := range codes {
		r.TopCodes = append(r.TopCodes, CodeShare{Code: c, Portion: PortionOf(n, r.Endpoints)})
	}
	slices.SortFunc(r.TopCodes, func(a, b CodeShare) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code))
	})
	r.TopCodes = r.TopCodes[:min(len(r.TopCodes), TopCodes)]
	return r
}

// networkValue names a network as the report may: a known CAIP-2 id as it
// is, any other "other", none "none".
func networkValue(g store.LatestGroup) string {
	switch {
	case g.Network == "":
		return ValueNone
	case lint.KnownNetwork(g.Network):
		return g.Network
	}
	return ValueOther
}

func schemeValue(s string) string {
	switch {
	case s == "":
		return ValueNone
	case lint.KnownScheme(s):
		return s
	}
	return ValueOther
}

func versionValue(v int) string {
	if v == 1 || v == 2 {
		return strconv.Itoa(v)
	}
	return ValueNone
}
