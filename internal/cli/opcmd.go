package cli

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/target"
	"github.com/exchangerebel/payability/internal/verdict"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
)

func init() {
	register(command{"check", "A1: grade one endpoint's 402 challenge, field by field", opCommand(ops.OpCheck)})
	register(command{"memo", "A4: grade memo binding over two back-to-back GETs", opCommand(ops.OpMemo)})
	register(command{"probe", "A3: send the seven published invalid probes and grade each rail", opCommand(ops.OpProbe)})
}

// statesOf returns the published states an --expect may name for an op.
func statesOf(op string) []string {
	switch op {
	case ops.OpCheck:
		return criteria.Payability().States
	case ops.OpMemo:
		return criteria.Payability().MemoOp.States
	}
	return nil
}

// opExitNote is the exit-status note of an op's help, naming only its own flag.
func opExitNote(op string) string {
	flag := "--expect"
	if op == ops.OpProbe {
		flag = "--expect-closed"
	}
	return `exit status:
  0  a verdict was produced, whatever it is
  1  internal error, or the output could not be written
  2  bad usage, or the URL was refused by the target-URL policy (the message names the rule)
  3  ` + flag + ` did not hold, or the overall reached --fail-on (docs/ci.md)`
}

// publishedState returns the published state an --expect names, matched
// case-insensitively ("populated" is POPULATED).
func publishedState(op, s string) (string, bool) {
	for _, st := range statesOf(op) {
		if strings.EqualFold(st, s) {
			return st, true
		}
	}
	return "", false
}

func opCommand(op string) func(ctx context.Context, e Env, args []string) int {
	return func(ctx context.Context, e Env, args []string) int {
		usage := op + " [--json] [--format FORMAT[=FILE]]... [--fail-on LEVEL] [--allow-private] [--expect STATE] URL"
		if op == ops.OpProbe {
			usage = op + " [--json] [--format FORMAT[=FILE]]... [--fail-on LEVEL] [--allow-private] [--expect-closed] URL"
		}
		fs := newFlagSet(e, op, usage, opExitNote(op))
		out := addOutputFlags(fs, format.FailOnNever)
		allowPrivate := fs.Bool("allow-private", false, "allow loopback and private target addresses (a seller's staging)")
		var expect *string
		var expectClosed *bool
		if op == ops.OpProbe {
			expectClosed = fs.Bool("expect-closed", false, "exit 3 unless both rails are PRESENT-FAIL-CLOSED and no exposure was observed")
		} else {
			expect = fs.String("expect", "", "exit 3 unless the state is `STATE`: one of "+quoteList(statesOf(op))+" (any case)")
		}
		pos, err := parseFlags(e, fs, args)
		if err != nil {
			return usageExit(err)
		}
		if len(pos) != 1 {
			return usageError(e, fs, "give exactly one URL")
		}
		if err := out.check("text"); err != nil {
			return usageError(e, fs, "%v", err)
		}
		if expect != nil && *expect != "" {
			st, ok := publishedState(op, *expect)
			if !ok {
				fmt.Fprintf(e.Stderr, "payability %s: --expect must be one of %s\n", op, quoteList(statesOf(op)))
				return exitUsage
			}
			*expect = st
		}
		runner := ops.Runner{Fetcher: e.fetcher(*allowPrivate), Now: e.now()}
		rep, err := runner.Run(ctx, op, pos[0])
		if err != nil {
			return refusal(e, err)
		}
		if code := out.writeReport(e, rep); code != ExitOK {
			return code
		}
		if !*allowPrivate && nonPublicLiteral(pos[0]) && fetchFailed(rep) {
			fmt.Fprintln(e.Stderr, "payability: note: the address guard refuses loopback and private addresses; use --allow-private to check a staging endpoint")
		}
		switch {
		case expect != nil && *expect != "" && rep.Outcome() != *expect:
			fmt.Fprintf(e.Stderr, "payability: expected %s, got %s\n", *expect, rep.Outcome())
			return ExitUnexpected
		case expectClosed != nil && *expectClosed && !rep.(ops.ProbeReport).Closed():
			fmt.Fprintln(e.Stderr, "payability: expected both rails PRESENT-FAIL-CLOSED with no exposures observed")
			return ExitUnexpected
		case out.tripped(e, format.FromReport(rep).Overall()):
			return ExitUnexpected
		}
		return ExitOK
	}
}

// nonPublicLiteral reports whether the URL's host is localhost or a literal IP
// address the address guard refuses (names are not resolved for a hint).
func nonPublicLiteral(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && !target.AddressAllowed(ip)
}

// fetchFailed reports whether the op could not fetch the target at all.
func fetchFailed(rep ops.Report) bool {
	switch r := rep.(type) {
	case ops.CheckReport:
		return r.Factors.Reason != nil && *r.Factors.Reason == verdict.ReasonFetchFailed
	case ops.MemoReport:
		return !r.Factors.Fetch1.FetchOK
	case ops.ProbeReport:
		return len(r.Probes) > 0 && r.Probes[0].Outcome == capture.Failed
	}
	return false
}
