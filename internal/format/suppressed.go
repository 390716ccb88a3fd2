package format

// SuppressionKind says what suppressed a finding.
type SuppressionKind string

// The two kinds of suppression (docs/ci.md, "Suppressions and baselines").
const (
	// SuppressedByIgnore: an entry of the configuration's ignore list,
	// with its reason.
	SuppressedByIgnore SuppressionKind = "ignore"
	// SuppressedByBaseline: the finding is in the baseline file.
	SuppressedByBaseline SuppressionKind = "baseline"
)

// Suppression is why a finding does not count: its kind, the reason (an
// ignore entry's, or a fixed text naming the baseline) and, for an ignore
// entry with one, the last day (UTC, YYYY-MM-DD) it holds. The reason is
// the repository's own text, never a fetched value.
type Suppression struct {
	Kind   SuppressionKind `json:"kind"`
	Reason string          `json:"reason"`
	Until  string          `json:"until,omitempty"`
}

// Fingerprint identifies a finding of the endpoint across runs: its rule,
// the endpoint, its leg, entry and field, as the SARIF results'
// partialFingerprints carry it (FingerprintKey) and a baseline records it.
func Fingerprint(endpoint string, f Finding) string {
	rule := f.Rule
	if rule == "" {
		rule = UnnamedRule
	}
	return fingerprint(rule, endpoint, f)
}

// Suppressed returns the number of suppressed findings of the result.
func (r Result) Suppressed() int {
	n := 0
	for _, f := range r.Findings() {
		if f.Suppressed != nil {
			n++
		}
	}
	return n
}

// Suppressed returns the number of suppressed findings of the run.
func (r Run) Suppressed() int {
	n := 0
	for _, res := range r.Results {
		n += res.Suppressed()
	}
	return n
}

// suppressedNote is how a suppressed finding is marked in one-line outputs.
func suppressedNote(s *Suppression) string {
	if s == nil {
		return ""
	}
	if s.Kind == SuppressedByBaseline {
		return " (suppressed: in the baseline)"
	}
	return " (suppressed: " + s.Reason + ")"
}

// sarifSuppression is SARIF 2.1.0's suppression object (§3.35): kind
// external (the suppression lives in the repository's configuration, not
// beside the finding), status accepted, the reason as the justification.
type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

func sarifSuppressions(s *Suppression) []sarifSuppression {
	if s == nil {
		return nil
	}
	j := s.Reason
	if s.Kind == SuppressedByBaseline {
		j = "in the baseline"
	} else if s.Until != "" {
		j += " (until " + s.Until + ")"
	}
	return []sarifSuppression{{Kind: "external", Status: "accepted", Justification: clip(safeText(j, ""), SARIFMaxText)}}
}

// baselineState is a result's baselineState when a baseline was compared:
// unchanged when the baseline holds it, new otherwise.
func baselineState(baselined bool, s *Suppression) string {
	switch {
	case !baselined:
		return ""
	case s != nil && s.Kind == SuppressedByBaseline:
		return "unchanged"
	}
	return "new"
}
