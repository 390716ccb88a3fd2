// Package criteria embeds the published criteria documents and exposes the
// constants the rest of payability is built from: states, grades, caps,
// timeouts and verdict-line grammar. It does no I/O.
package criteria

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

//go:embed payability.criteria.json
var payabilityRaw []byte

//go:embed rail-probe.criteria.json
var railProbeRaw []byte

// Service names, as the criteria spell them.
const (
	ServicePayability = "payability-verdict"
	ServiceRailProbe  = "rail-probe"
)

// ServiceX402Preflight is the third paid service (issue 25): the preflight
// and lint ops, sold under the x402-preflight/v1 and x402-lint/v1 documents.
// It has no criteria document of its own: those two are its rules.
const ServiceX402Preflight = "x402-preflight"

// Doc is the part of a criteria document the code reads. The served document
// is always the embedded bytes (see Raw and WithPin), never a re-encoding.
type Doc struct {
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	Service          string `json:"service"`
	Version          string `json:"version"`
	Op               string `json:"op"`
	Corpus           struct {
		ID     string `json:"id"`
		SHA256 string `json:"sha256"`
	} `json:"corpus"`
	Price struct {
		USDCUnitsPerCall int64  `json:"usdc_units_per_call"`
		Label            string `json:"label"`
	} `json:"price"`
	FreeTier struct {
		PerDay        int `json:"per_day"`
		MinIntervalMS int `json:"min_interval_ms"`
	} `json:"free_tier"`
	InputContract struct {
		Caps struct {
			BodyBytes int `json:"body_bytes"`
		} `json:"caps"`
	} `json:"input_contract"`
	TargetFetch struct {
		TimeoutMS    int `json:"timeout_ms"`
		BodyCapBytes int `json:"body_cap_bytes"`
	} `json:"target_fetch"`
	States         []string `json:"states"`
	Grades         []string `json:"grades"`
	VerdictGrammar struct {
		Line string `json:"line"`
	} `json:"verdict_grammar"`
	DisclosureSentence string `json:"disclosure_sentence"`
	HonestyLine        string `json:"honesty_line"`
	Retention          string `json:"retention"`
	NoFundsProperty    string `json:"no_funds_property"`
	ProbeInventory     []struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	} `json:"probe_inventory"`
	Custody json.RawMessage `json:"custody"`
	MemoOp  *struct {
		Op    string `json:"op"`
		Price struct {
			USDCUnitsPerCall int64  `json:"usdc_units_per_call"`
			Label            string `json:"label"`
		} `json:"price"`
		States         []string `json:"states"`
		VerdictGrammar struct {
			Line string `json:"line"`
		} `json:"verdict_grammar"`
		Ledger struct {
			KVPrefix     string   `json:"kv_prefix"`
			ClosedFields []string `json:"closed_fields"`
		} `json:"ledger"`
		Factors []string `json:"factors"`
	} `json:"memo_op"`
}

// LedgerClosedFields returns the closed ledger field list of the document's
// main op (custody.ledger_closed_fields).
func (d Doc) LedgerClosedFields() []string {
	var c struct {
		LedgerClosedFields []string `json:"ledger_closed_fields"`
	}
	_ = json.Unmarshal(d.Custody, &c)
	return c.LedgerClosedFields
}

// Timeout is the published per-fetch timeout.
func (d Doc) Timeout() time.Duration {
	return time.Duration(d.TargetFetch.TimeoutMS) * time.Millisecond
}

// The documents are parsed on first use, not at start-up: a command that
// never reads them (version, help) pays nothing for them.
var (
	payability = sync.OnceValue(func() Doc { return mustParse(payabilityRaw) })
	railProbe  = sync.OnceValue(func() Doc { return mustParse(railProbeRaw) })
)

func mustParse(raw []byte) Doc {
	var d Doc
	if err := json.Unmarshal(raw, &d); err != nil {
		panic("criteria: embedded document does not parse: " + err.Error())
	}
	return d
}

// Payability is the payability-verdict criteria (ops check and memo).
func Payability() Doc { return payability() }

// RailProbe is the rail-probe criteria (op probe).
func RailProbe() Doc { return railProbe() }

// ForService returns the document of a service name.
func ForService(service string) (Doc, bool) {
	switch service {
	case ServicePayability:
		return payability(), true
	case ServiceRailProbe:
		return railProbe(), true
	}
	return Doc{}, false
}

// Raw returns a copy of the embedded bytes of a service's document.
func Raw(service string) []byte {
	switch service {
	case ServicePayability:
		return bytes.Clone(payabilityRaw)
	case ServiceRailProbe:
		return bytes.Clone(railProbeRaw)
	}
	return nil
}

var pinRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`("corpus"\s*:\s*\{[^{}]*"sha256"\s*:\s*")([0-9a-f]{64})(")`)
})

// WithPin returns the document bytes with corpus.sha256 replaced by pin and
// every other byte unchanged.
func WithPin(raw []byte, pin string) ([]byte, error) {
	if len(pin) != 64 || strings.Trim(pin, "0123456789abcdef") != "" {
		return nil, errors.New("criteria: pin is not 64 lower-case hex digits")
	}
	locs := pinRe().FindAllSubmatchIndex(raw, -1)
	if len(locs) != 1 {
		return nil, fmt.Errorf("criteria: expected one corpus.sha256, found %d", len(locs))
	}
	l := locs[0]
	out := make([]byte, 0, len(raw))
	out = append(out, raw[:l[4]]...)
	out = append(out, pin...)
	out = append(out, raw[l[5]:]...)
	return out, nil
}

// TimeFormat is the check-end timestamp format: UTC, RFC 3339, milliseconds, Z.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Timestamp formats t as the criteria's check-end UTC.
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// CheckLine renders the check op's verdict line from the published grammar.
func CheckLine(state string, end time.Time) string { return CheckLineAt(state, Timestamp(end)) }

// CheckLineAt is CheckLine with the check-end time already formatted
// (Timestamp), so a report formats it once for its line and checked_at.
func CheckLineAt(state, ts string) string { return checkLine().render(state, ts) }

// MemoLine renders the memo op's verdict line from the published grammar.
func MemoLine(state string, end time.Time) string { return MemoLineAt(state, Timestamp(end)) }

// MemoLineAt is MemoLine with the check-end time already formatted.
func MemoLineAt(state, ts string) string { return memoLine().render(state, ts) }

// ProbeLine renders the probe op's verdict line from the published grammar.
func ProbeLine(direct, facilitator string, end time.Time) string {
	// The grammar names <GRADE> twice: direct first, facilitator second.
	line := railProbe().VerdictGrammar.Line
	line = strings.Replace(line, "<GRADE>", direct, 1)
	line = strings.Replace(line, "<GRADE>", facilitator, 1)
	return strings.Replace(line, "<check-end UTC>", Timestamp(end), 1)
}
