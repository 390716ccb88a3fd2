package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
)

// originFlags are lint's origin-mode flags; other says a single-URL flag
// or a URL was given too.
type originFlags struct {
	origin, openAPI string
	allowPrivate    bool
	other           bool
	profile         string
}

// runLintOrigin is `lint --origin`: one report for the origin, the document
// findings and every listed resource's lint, in every --format.
func runLintOrigin(ctx context.Context, e Env, fs *flagSet, out *outputFlags, sup *suppressFlags, f originFlags) int {
	switch {
	case f.origin == "":
		return usageError(e, fs, "--openapi needs --origin")
	case f.other:
		return usageError(e, fs, "--origin takes no URL, --method, --body or RPC flags (each listed resource is linted with its listed method and body)")
	}
	if err := out.check("text"); err != nil {
		return usageError(e, fs, "%v", err)
	}
	if err := sup.load(e); err != nil {
		return usageError(e, fs, "%v", err)
	}
	runner := ops.Runner{Fetcher: e.fetcher(f.allowPrivate), Now: e.now(), Profile: f.profile}
	rep, err := runner.LintOrigin(ctx, f.origin, f.openAPI)
	if err == ops.ErrNotAnOrigin {
		return usageError(e, fs, "--origin takes scheme://host[:port], no path, query or fragment")
	}
	if err != nil {
		return refusal(e, err)
	}
	run := formatRun(ops.OpLint, format.FromOriginReport(rep))
	run.Rules = append(run.Rules, format.ProfileRules(f.profile)...)
	// The suppressions mark the document findings and every resource's, as
	// `lint URL` marks one report's (docs/ci.md).
	if err := sup.apply(run.Results); err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	run.Baselined = sup.baseline != nil
	if out.stdout != "text" {
		sup.warn(e)
	}
	code := out.writeAll(e, run,
		func(w io.Writer, _ bool) error { return renderLintOriginMarked(w, rep, run.Results, sup.notes()) },
		func(w io.Writer) error {
			if !sup.active() {
				return encodeJSON(w, rep)
			}
			return encodeJSON(w, sup.markedOrigin(rep, run.Results))
		})
	if code != ExitOK {
		return code
	}
	if !f.allowPrivate && nonPublicLiteral(rep.Origin) && allUnanswered(rep) {
		fmt.Fprintln(e.Stderr, "payability: note: the address guard refuses loopback and private addresses; use --allow-private to lint a staging origin")
	}
	if out.tripped(e, run.Overall()) {
		return ExitUnexpected
	}
	return ExitOK
}

func allUnanswered(r ops.OriginReport) bool {
	for _, d := range r.Documents {
		if d.Status != 0 {
			return false
		}
	}
	return true
}

// docLegNames are the document legs as the text report names them.
var docLegNames = map[lint.Leg]string{
	lint.LegOrigin:    "origin",
	lint.LegWellKnown: "/.well-known/x402",
	lint.LegManifest:  "/.well-known/x402.json",
	lint.LegOpenAPI:   "OpenAPI document",
}

// renderLintOrigin prints an origin lint as text: the documents and their
// findings, then each listed resource as `lint URL` prints it, then the
// bottom line for the origin.
func renderLintOrigin(w io.Writer, r ops.OriginReport) error {
	return renderLintOriginMarked(w, r, format.FromOriginReport(r), nil)
}

// renderLintOriginMarked is renderLintOrigin with the suppressions: results
// are the origin's marked results (the documents first, then one per
// resource, as format.FromOriginReport returns them), notes the
// suppressions' lines. The counts leave the suppressed findings out.
func renderLintOriginMarked(w io.Writer, r ops.OriginReport, results []format.Result, notes []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "x402 lint of origin %s\n", r.Origin)
	fmt.Fprintf(&b, "rules %s revision %s, corpus sha256 %s\n", r.Rules.ID, r.Rules.Revision, r.Rules.CorpusSHA256)
	b.WriteString("\ndocuments\n")
	for _, d := range r.Documents {
		state := "not read"
		if d.Read {
			state = fmt.Sprintf("read, %d listings", d.Listings)
		}
		status := "no response"
		if d.Status != 0 {
			status = fmt.Sprintf("status %d", d.Status)
		}
		fmt.Fprintf(&b, "  %-24s %s (%s): %s\n", docLegNames[d.Leg], d.URL, status, state)
	}
	errs, warns, suppressed := 0, 0, 0
	for _, res := range results {
		suppressed += res.Suppressed()
	}
	var docMarks []*format.Suppression
	if len(results) > 0 {
		docMarks = findingMarks(r.Origin, r.Findings, results[0])
	}
	for _, leg := range []lint.Leg{lint.LegOrigin, lint.LegWellKnown, lint.LegManifest, lint.LegOpenAPI} {
		first := true
		for i, f := range r.Findings {
			if f.Leg != leg {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\n%s\n", docLegNames[leg])
				first = false
			}
			writeLintLine(&b, f, docMarks[i])
			if docMarks[i] != nil {
				continue
			}
			switch f.Severity {
			case lint.Error:
				errs++
			case lint.Warn:
				warns++
			}
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	for i, res := range r.Resources {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		marked := format.FromLintReport(res.LintReport)
		if i+1 < len(results) {
			marked = results[i+1]
		}
		marks := lintMarks(res.LintReport, marked)
		if err := renderLintMarked(w, res.LintReport, marks, marked, nil); err != nil {
			return err
		}
		for j, f := range res.Findings {
			if marks[j] != nil {
				continue
			}
			switch f.Severity {
			case lint.Error:
				errs++
			case lint.Warn:
				warns++
			}
		}
	}
	tail := ""
	if suppressed > 0 {
		tail = fmt.Sprintf(" — %d suppressed", suppressed)
	}
	if len(notes) > 0 {
		if _, err := io.WriteString(w, "\n"+strings.Join(notes, "\n")+"\n"); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\nX402 LINT ORIGIN — conforms: %s — %d resources, %d errors, %d warnings%s — %s\n",
		yesNo(r.Conforms), len(r.Resources), errs, warns, tail, r.CheckedAt)
	return err
}
