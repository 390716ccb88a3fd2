package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
)

func init() {
	register(command{"lint", "x402 protocol conformance of any seller's 402 (x402-lint/v1)", runLint})
}

// maxLintBody bounds --body (inline or @FILE): it is a request body to
// send, not something to store.
const maxLintBody = 65536

const lintExitNote = `exit status:
  0  nothing at or above --fail-on was found
  1  internal error
  2  bad usage, or the URL was refused by the target-URL policy (the message names the rule)
  3  a finding at or above --fail-on (default error)`

func runLint(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "lint",
		"lint [--json] [--format FORMAT[=FILE]]... [--allow-private] [--method GET|POST] [--body JSON|@FILE] [--fail-on error|warn|never] [--config FILE] [--write-baseline FILE] [--solana-rpc URL] [--evm-rpc URL] [--profile x402scan|bazaar] (URL | --origin ORIGIN [--openapi URL] | --mcp URL)",
		"Grades one response of URL against the published rules x402-lint/v1 (payability criteria x402-lint): the v2 PAYMENT-REQUIRED header, the v1 JSON body, every accepts entry, HTTP hygiene and extensions; with an RPC URL, the chain accounts the entries name. With --origin, reads the origin's discovery documents (/.well-known/x402, /.well-known/x402.json, --openapi) and lints every resource they list, and the listings against the live 402s (docs/lint.md, Origin mode). With --mcp, lints the x402 payment requirement of each paid tool of an MCP server (docs/lint.md). A repository's .payability.json suppresses findings with a reason (docs/ci.md).",
		lintExitNote)
	out := addOutputFlags(fs, format.FailOnError)
	allowPrivate := fs.Bool("allow-private", false, "allow loopback and private addresses for the target and the RPC nodes (a seller's staging)")
	method := fs.String("method", "GET", "the request `METHOD`: GET or POST")
	body := fs.String("body", "", "the POST body: `JSON` text, or @FILE to read it from a file (default {})")
	solanaRPC := fs.String("solana-rpc", "", "check Solana chain readiness through the JSON-RPC node at `URL` (opt-in)")
	evmRPC := fs.String("evm-rpc", "", "check the EVM EIP-712 domain through the JSON-RPC node at `URL` (opt-in)")
	origin := fs.String("origin", "", "lint the whole service at `ORIGIN` (scheme://host[:port]): its discovery documents and every resource they list")
	openAPI := fs.String("openapi", "", "with --origin, also read the OpenAPI document at `URL` (paid operations carry x-payment-info)")
	profile := fs.String("profile", "", "also grade the acceptance rules of the directory `NAME`: x402scan or bazaar (docs/lint.md, Directory profiles); they never change conforms")
	mcpURL := fs.String("mcp", "", "lint the paid tools of the MCP server at `URL` (streamable HTTP): list the tools, call each once without payment, lint each x402 payment requirement (docs/lint.md)")
	sup := addSuppressFlags(fs)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if _, ok := lint.ProfileByName(*profile); *profile != "" && !ok {
		return usageError(e, fs, "--profile must be x402scan or bazaar")
	}
	if *mcpURL != "" {
		if len(pos) != 0 || *body != "" || *solanaRPC != "" || *evmRPC != "" || strings.ToUpper(*method) != http.MethodGet {
			return usageError(e, fs, "--mcp takes no URL, --method, --body or RPC flag")
		}
		if *origin != "" || *openAPI != "" || *profile != "" {
			return usageError(e, fs, "--mcp takes no --origin, --openapi or --profile")
		}
		return runLintMCP(ctx, e, args, fs, *mcpURL, *allowPrivate, out, sup)
	}
	if *origin != "" || *openAPI != "" {
		return runLintOrigin(ctx, e, fs, out, sup, originFlags{origin: *origin, openAPI: *openAPI, allowPrivate: *allowPrivate, profile: *profile,
			other: len(pos) > 0 || *body != "" || *solanaRPC != "" || *evmRPC != "" || strings.ToUpper(*method) != http.MethodGet})
	}
	if len(pos) != 1 {
		return usageError(e, fs, "give exactly one URL")
	}
	m := strings.ToUpper(*method)
	if m != http.MethodGet && m != http.MethodPost {
		return usageError(e, fs, "--method must be GET or POST")
	}
	if err := out.check("text"); err != nil {
		return usageError(e, fs, "%v", err)
	}
	var reqBody []byte
	if *body != "" {
		if m != http.MethodPost {
			return usageError(e, fs, "--body needs --method POST")
		}
		b, err := lintBody(*body)
		if err != nil {
			return usageError(e, fs, "%v", err)
		}
		reqBody = b
	}
	if err := sup.load(e); err != nil {
		return usageError(e, fs, "%v", err)
	}
	runner := ops.Runner{Fetcher: e.fetcher(*allowPrivate), Now: e.now(), Profile: *profile}
	if *solanaRPC != "" || *evmRPC != "" {
		c, err := chain.New(chain.Options{SolanaRPC: *solanaRPC, EVMRPC: *evmRPC, AllowPrivate: *allowPrivate, UserAgent: buildinfo.UserAgent})
		if err != nil {
			return usageError(e, fs, "%v", err)
		}
		runner.Chain = c
	}
	rep, err := runner.Lint(ctx, pos[0], m, reqBody)
	if err != nil {
		return refusal(e, err)
	}
	res := []format.Result{format.FromReport(rep)}
	if err := sup.apply(res); err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	if code := out.writeLintReport(e, rep, res[0], sup); code != ExitOK {
		return code
	}
	if !*allowPrivate && nonPublicLiteral(pos[0]) && rep.Status == 0 {
		fmt.Fprintln(e.Stderr, "payability: note: the address guard refuses loopback and private addresses; use --allow-private to lint a staging endpoint")
	}
	// A finding at or above --fail-on: the overall counts errors and
	// warnings only, as lint's exit status always did (info never counts),
	// and no suppressed finding.
	if out.tripped(e, res[0].Overall()) {
		return ExitUnexpected
	}
	return ExitOK
}

// lintBody reads --body: inline JSON, or @FILE (at most maxLintBody bytes);
// either must be one JSON value.
func lintBody(arg string) ([]byte, error) {
	b := []byte(arg)
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		f, err := os.Open(name)
		if err != nil {
			return nil, errors.New("--body @FILE: the file cannot be read")
		}
		defer f.Close()
		b, err = io.ReadAll(io.LimitReader(f, maxLintBody+1))
		if err != nil {
			return nil, errors.New("--body @FILE: the file cannot be read")
		}
	}
	if len(b) > maxLintBody {
		return nil, fmt.Errorf("--body is over %d bytes", maxLintBody)
	}
	if !json.Valid(b) {
		return nil, errors.New("--body is not JSON")
	}
	return b, nil
}

// renderLint prints a lint report as text: the request, then the findings
// grouped by the response, each leg, and each entry, then the bottom line.
func renderLint(w io.Writer, r ops.LintReport) error {
	return renderLintMarked(w, r, nil, format.FromLintReport(r), nil)
}

// renderLintMarked is renderLint with the suppressions: marks[i] is the
// suppression of r.Findings[i] (nil when none), res the marked result (its
// counts leave the suppressed findings out), notes the suppressions' lines.
func renderLintMarked(w io.Writer, r ops.LintReport, marks []*format.Suppression, res format.Result, notes []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "x402 lint of %s (%s)\n", r.URL, r.Method)
	if r.Status != 0 {
		fmt.Fprintf(&b, "status %d", r.Status)
	} else {
		b.WriteString("no response")
	}
	fmt.Fprintf(&b, "; v2 header: %s; v1 body: %s\n", yesNo(r.Dialect.V2Header), yesNo(r.Dialect.V1Body))
	fmt.Fprintf(&b, "rules %s revision %s, corpus sha256 %s\n", r.Rules.ID, r.Rules.Revision, r.Rules.CorpusSHA256)
	line := func(i int) {
		var m *format.Suppression
		if i < len(marks) {
			m = marks[i]
		}
		writeLintLine(&b, r.Findings[i], m)
	}
	group := func(title string, keep func(lint.Finding) bool) {
		var at []int
		for i, f := range r.Findings {
			if keep(f) {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", title)
		for _, i := range at {
			line(i)
		}
	}
	group("response", func(f lint.Finding) bool { return f.Leg == lint.LegHTTP })
	for _, leg := range []lint.Leg{lint.LegHeader, lint.LegBody} {
		name := "header (PAYMENT-REQUIRED)"
		if leg == lint.LegBody {
			name = "body"
		}
		group(name, func(f lint.Finding) bool { return f.Leg == leg && f.Entry == nil })
		for _, s := range r.Entries {
			if s.Leg != leg {
				continue
			}
			scheme, network := s.Scheme, s.Network
			if scheme == "" {
				scheme = "?"
			}
			if network == "" {
				network = "?"
			}
			fmt.Fprintf(&b, "\n%s entry %d: x402Version %d, %s on %s — %d errors, %d warnings\n",
				name, s.Index, s.X402Version, scheme, network, s.Errors, s.Warnings)
			for i, f := range r.Findings {
				if f.Leg == leg && f.Entry != nil && *f.Entry == s.Index {
					line(i)
				}
			}
		}
	}
	if r.Profile != "" {
		fmt.Fprintf(&b, "\nprofile %s (the directory's acceptance rules; conforms is x402-lint's alone)\n", r.Profile)
		if len(r.ProfileFindings) == 0 {
			b.WriteString("  accepted: no finding\n")
		}
		pmarks := findingMarks(r.URL, r.ProfileFindings, res)
		for i, f := range r.ProfileFindings {
			writeLintLine(&b, f, pmarks[i])
		}
	}
	// The bottom line counts x402-lint's own findings (a profile's never
	// change conforms), the suppressed ones left out and counted apart.
	errs, warns, suppressed := 0, 0, res.Suppressed()
	for i, f := range r.Findings {
		if i < len(marks) && marks[i] != nil {
			continue
		}
		switch f.Severity {
		case lint.Error:
			errs++
		case lint.Warn:
			warns++
		}
	}
	tail := ""
	if r.Profile != "" {
		tail = fmt.Sprintf(" — profile %s: %d findings", r.Profile, len(r.ProfileFindings))
	}
	if suppressed > 0 {
		tail += fmt.Sprintf(" — %d suppressed", suppressed)
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nX402 LINT — conforms: %s — %d errors, %d warnings%s — %s\n", yesNo(r.Conforms), errs, warns, tail, r.CheckedAt)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLintLine prints one finding, with its suppression (nil when none).
func writeLintLine(b *strings.Builder, f lint.Finding, m *format.Suppression) {
	mark := ""
	if m != nil {
		mark = "  [suppressed: " + m.Reason + "]"
		if m.Until != "" {
			mark = "  [suppressed until " + m.Until + ": " + m.Reason + "]"
		}
	}
	fmt.Fprintf(b, "  %-5s  %s: %s%s\n", f.Severity, f.Field, f.Message, mark)
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}
