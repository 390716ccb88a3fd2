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
func runLintOrigin(ctx context.Context, e Env, fs *flagSet, out *outputFlags, f originFlags) int {
	switch {
	case f.origin == "":
		return usageError(e, fs, "--openapi needs --origin")
	case f.other:
		return usageError(e, fs, "--origin takes no URL, --method, --body or RPC flags (each listed resource is linted with its listed method and body)")
	}
	if err := out.check("text"); err != nil {
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
	code := out.writeAll(e, run,
		func(w io.Writer, _ bool) error { return renderLintOrigin(w, rep) },
		func(w io.Writer) error { return encodeJSON(w, rep) })
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
	errs, warns := 0, 0
	for _, leg := range []lint.Leg{lint.LegOrigin, lint.LegWellKnown, lint.LegManifest, lint.LegOpenAPI} {
		first := true
		for _, f := range r.Findings {
			if f.Leg != leg {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\n%s\n", docLegNames[leg])
				first = false
			}
			fmt.Fprintf(&b, "  %-5s  %s: %s\n", f.Severity, f.Field, f.Message)
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
	for _, res := range r.Resources {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := renderLint(w, res.LintReport); err != nil {
			return err
		}
		e, wn := res.Counts()
		errs += e
		warns += wn
	}
	_, err := fmt.Fprintf(w, "\nX402 LINT ORIGIN — conforms: %s — %d resources, %d errors, %d warnings — %s\n",
		yesNo(r.Conforms), len(r.Resources), errs, warns, r.CheckedAt)
	return err
}
