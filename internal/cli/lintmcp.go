//go:build !quick

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/mcp"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// runLintMCP is lint --mcp: the server's URL passes the target policy, the
// session goes through the guarded client (--allow-private for loopback
// and private addresses), and each tool is one result of every format.
func runLintMCP(ctx context.Context, e Env, _ []string, fs *flagSet, url string, allowPrivate bool, out *outputFlags, sup *suppressFlags) int {
	if err := out.check("text"); err != nil {
		return usageError(e, fs, "%v", err)
	}
	if err := sup.load(e); err != nil {
		return usageError(e, fs, "%v", err)
	}
	tc := target.New(target.Options{AllowPrivate: allowPrivate, UserAgent: buildinfo.UserAgent})
	runner := ops.Runner{Now: e.now()}
	rep, err := runner.LintMCP(ctx, url, tc.StreamClient(ops.MCPBodyCap), mcp.LintSession)
	if err != nil {
		return refusal(e, err)
	}
	results := format.FromMCPLint(rep)
	if err := sup.apply(results); err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	run := formatRun(ops.OpLint, results)
	run.Baselined = sup.baseline != nil
	if out.stdout != "text" {
		sup.warn(e)
	}
	code := out.writeAll(e, run,
		func(w io.Writer, _ bool) error { return renderMCPLint(w, rep, results, sup.notes()) },
		func(w io.Writer) error { return encodeJSON(w, mcpJSON{rep, sup.jsonSummary()}) })
	if code != ExitOK {
		return code
	}
	if !allowPrivate && nonPublicLiteral(url) && rep.Problem == ops.MCPConnectFailed {
		fmt.Fprintln(e.Stderr, "payability: note: the address guard refuses loopback and private addresses; use --allow-private to lint a staging MCP server")
	}
	if out.tripped(e, run.Overall()) {
		return ExitUnexpected
	}
	return ExitOK
}

// mcpJSON is lint --mcp's JSON: the report, and what the suppressions did
// when a configuration is in force.
type mcpJSON struct {
	ops.MCPLintReport
	Suppressions *suppressionsJSON `json:"suppressions,omitempty"`
}

// jsonSummary is the suppressions' summary for a JSON output (nil when no
// configuration is in force).
func (s *suppressFlags) jsonSummary() *suppressionsJSON {
	if !s.active() {
		return nil
	}
	return &suppressionsJSON{Config: s.path, BaselineFile: s.baselinePath, Summary: s.matcher.Summary()}
}

// renderMCPLint prints lint --mcp for people: one block per tool, then the
// bottom line.
func renderMCPLint(w io.Writer, r ops.MCPLintReport, results []format.Result, notes []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "x402 lint of the MCP server %s\n", r.URL)
	fmt.Fprintf(&b, "rules %s revision %s, corpus sha256 %s\n", r.Rules.ID, r.Rules.Revision, r.Rules.CorpusSHA256)
	if r.Problem != "" {
		fmt.Fprintf(&b, "\nno tools: %s\n", r.Problem)
	}
	byURL := map[string]format.Result{}
	for _, res := range results {
		byURL[res.URL] = res
	}
	paid := 0
	for _, t := range r.Tools {
		res := byURL[format.MCPToolURL(r.URL, t)]
		errs, warns, _ := res.Counts()
		fmt.Fprintf(&b, "\ntool %s: %s", t.Label(), t.Outcome)
		if t.Outcome == ops.MCPPaymentRequired {
			paid++
			fmt.Fprintf(&b, " — conforms: %s — %d errors, %d warnings", yesNo(t.Conforms != nil && *t.Conforms), errs, warns)
			for _, s := range t.Entries {
				fmt.Fprintf(&b, "\n  entry %d: x402Version %d, %s on %s", s.Index, s.X402Version, orQ(s.Scheme), orQ(s.Network))
			}
		}
		b.WriteString("\n")
		for _, f := range res.Findings() {
			if f.Rule == format.MCPRuleCallFailed {
				continue
			}
			mark := ""
			if f.Suppressed != nil {
				mark = "  [suppressed: " + f.Suppressed.Reason + "]"
			}
			fmt.Fprintf(&b, "  %-7s  %s: %s%s\n", string(f.Level), strings.TrimPrefix(f.Field, string(lint.LegMCP)+":"), f.Message, mark)
		}
	}
	if r.Truncated {
		fmt.Fprintf(&b, "\nonly the first %d tools were listed and called\n", ops.MaxMCPTools)
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nX402 LINT (MCP) — %d tools, %d asking for payment — %s — %s\n", len(r.Tools), paid, formatRun(ops.OpLint, results).Overall(), r.CheckedAt)
	_, err := io.WriteString(w, b.String())
	return err
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
