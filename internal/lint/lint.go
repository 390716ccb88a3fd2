package lint

// Lint grades one response against x402-lint/v1.
func Lint(in Input) Result {
	_ = Decode(in.Capture)
	return Result{Status: in.Capture.Status, Findings: []Finding{}, Entries: []EntrySummary{}}
}
