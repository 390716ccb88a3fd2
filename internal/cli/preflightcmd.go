package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/reliability"
	"github.com/exchangerebel/payability/internal/report"
)

func init() {
	register(command{"preflight", "before paying: GO, HOLD or STOP for one x402 endpoint, bound to the exact terms (x402-preflight/v1)", runPreflight})
}

// Exit statuses of preflight, one per decision.
const (
	ExitPreflightHold = 10
	ExitPreflightStop = 20
)

const preflightNote = `Sends, in order: the unpaid request (GET, and POST when GET is not a 402; or --method),
a second unpaid request, two payment probes that cannot pay (docs/preflight.md), HEAD and the
other method. GO means no red flag was observed; it never guarantees that a payment settles.
exit status: 0 GO; 10 HOLD; 20 STOP (under --fail-on warn, the default; --fail-on error exits 0
on HOLD; --fail-on never exits 0 whatever the decision); 2 bad usage or the URL was refused;
1 internal error.`

// preflightFlags are preflight's argument flags.
type preflightFlags struct {
	method, body, network, scheme, asset, maxAmount, serviceID string
}

// request reads --body @FILE and validates the flags (the error names the flag).
func (p preflightFlags) request(e Env, url string) (ops.PreflightRequest, error) {
	a := ops.PreflightArgs{URL: url, Method: p.method, Network: p.network, Scheme: p.scheme, Asset: p.asset,
		MaxAmount: p.maxAmount, ServiceID: p.serviceID}
	if p.body != "" {
		a.Body = []byte(p.body)
		if strings.HasPrefix(p.body, "@") {
			b, err := readBounded(e, p.body[1:], ops.MaxPreflightBody)
			if err != nil {
				return ops.PreflightRequest{}, fmt.Errorf("--body: %v", err)
			}
			a.Body = b
		}
	}
	req, err := a.Request()
	var ae *ops.ArgError
	if errors.As(err, &ae) {
		return req, fmt.Errorf("--%s %s", ae.Arg, ae.Problem)
	}
	return req, err
}

// readBounded reads a file (or - for stdin) of at most limit bytes.
func readBounded(e Env, name string, limit int) ([]byte, error) {
	var r io.Reader = e.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, errors.New("the file cannot be read")
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, errors.New("the input cannot be read")
	}
	if len(b) > limit {
		return nil, fmt.Errorf("the input is over %d bytes", limit)
	}
	return b, nil
}

func runPreflight(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "preflight",
		"preflight URL [--method GET|POST] [--body JSON|@FILE] [--network CAIP2] [--scheme S] [--asset ADDR] [--max-amount ATOMIC] [--service-id ID [--cortx-api URL]] [--json] [--format FORMAT[=FILE]]... [--fail-on LEVEL] [--allow-private] [--sign-key FILE]",
		preflightNote)
	var p preflightFlags
	fs.StringVar(&p.method, "method", "", "the gated `METHOD`, GET or POST (default: GET, then POST when GET is not a 402)")
	fs.StringVar(&p.body, "body", "", "the `JSON` every POST carries, or @FILE (default {})")
	fs.StringVar(&p.network, "network", "", "pay only on this CAIP-2 `NETWORK` (e.g. eip155:8453)")
	fs.StringVar(&p.scheme, "scheme", "", "pay only with this `SCHEME` (e.g. exact)")
	fs.StringVar(&p.asset, "asset", "", "pay only in this `ASSET` (token address or mint)")
	fs.StringVar(&p.maxAmount, "max-amount", "", "pay at most `ATOMIC` units of the asset")
	fs.StringVar(&p.serviceID, "service-id", "", "also check the CORTX reliability record of service `ID`")
	api := fs.String("cortx-api", reliability.DefaultAPI, "the CORTX API base `URL` (with --service-id)")
	out := addOutputFlags(fs, format.FailOnWarn)
	fs.Lookup("fail-on").Usage = "exit with the decision's status when the overall reaches `LEVEL`: warn (HOLD 10, STOP 20), error (STOP 20 only) or never (always 0)"
	allowPrivate := fs.Bool("allow-private", false, "allow loopback and private target addresses (a seller's staging)")
	signKey := fs.String("sign-key", "", "sign the JSON record with the Ed25519 key in `FILE` (PEM PKCS#8); payability verify --key checks it")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 1 {
		return usageError(e, fs, "give exactly one URL")
	}
	req, err := p.request(e, pos[0])
	if err != nil {
		return usageError(e, fs, "%v", err)
	}
	stdoutFormat := "text"
	if *signKey != "" {
		stdoutFormat = "json" // --sign-key prints the signed record unless --format says otherwise
	}
	if err := out.check(stdoutFormat); err != nil {
		return usageError(e, fs, "%v", err)
	}
	req.CORTXAPI, req.CORTXAllowHTTP = *api, *allowPrivate
	var key *report.Key
	if *signKey != "" {
		k, err := report.LoadKeyFile(*signKey)
		if err != nil {
			fmt.Fprintln(e.Stderr, "payability preflight: --sign-key: the key file cannot be used")
			return exitUsage
		}
		key = &k
	}
	runner := ops.Runner{Fetcher: e.fetcher(*allowPrivate), Now: e.now()}
	rep, err := runner.Preflight(ctx, req)
	if err != nil {
		return refusal(e, err)
	}
	res, err := format.FromPreflightReport(rep)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	if code := out.writeAll(e, formatRun(ops.OpPreflight, []format.Result{res}),
		func(w io.Writer, colour bool) error { RenderPreflight(w, rep, colour); return nil },
		func(w io.Writer) error { return writePreflightJSON(w, rep, key) }); code != ExitOK {
		return code
	}
	if !*allowPrivate && nonPublicLiteral(pos[0]) && preflightFetchFailed(rep) {
		fmt.Fprintln(e.Stderr, "payability: note: the address guard refuses loopback and private addresses; use --allow-private to check a staging endpoint")
	}
	return preflightExit(rep, out.threshold)
}

// preflightExit is the decision's exit status (0 GO, 10 HOLD, 20 STOP) under
// --fail-on: warn (the default) keeps both, error keeps only STOP's, never
// exits 0 whatever the decision.
func preflightExit(rep ops.PreflightReport, t format.FailOn) int {
	switch {
	case t == format.FailOnNever, t == format.FailOnError && rep.Decision != preflight.Stop:
		return ExitOK
	}
	return rep.ExitCode()
}

// writePreflightJSON writes the record as --json prints it.
func writePreflightJSON(w io.Writer, rep ops.PreflightReport, key *report.Key) error {
	b, err := PreflightJSON(rep, key)
	if err != nil {
		return fmt.Errorf("signing the record failed: %w", err)
	}
	_, err = w.Write(b)
	return err
}

func preflightFetchFailed(rep ops.PreflightReport) bool {
	return len(rep.Fetches) > 0 && rep.Fetches[0].Outcome == "failed"
}

// PreflightJSON is the record as printed: indented JSON, signed when key is
// not nil (the signature covers the RFC 8785 form; whitespace does not count).
func PreflightJSON(rep ops.PreflightReport, key *report.Key) ([]byte, error) {
	var raw []byte
	var err error
	if key != nil {
		raw, err = report.Sign(rep, *key)
	} else {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		err = enc.Encode(rep)
		raw = b.Bytes()
	}
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// RenderPreflight writes the text a person reads in five seconds: the
// decision and its sentence, every reason, then what was checked.
func RenderPreflight(w io.Writer, rep ops.PreflightReport, colour bool) {
	word := string(rep.Decision)
	if colour {
		word = map[preflight.Decision]string{preflight.Go: ansiGreen, preflight.Hold: ansiYellow, preflight.Stop: ansiRed}[rep.Decision] + ansiBold + word + ansiReset
	}
	switch rep.Decision {
	case preflight.Go:
		fmt.Fprintf(w, "%s  %s\n", word, preflight.GoSentence(rep.CheckedAt))
	case preflight.Hold:
		fmt.Fprintf(w, "%s  ask a human before paying\n", word)
	default:
		fmt.Fprintf(w, "%s  do not pay\n", word)
	}
	for _, r := range rep.Reasons {
		fmt.Fprintf(w, "  - %s: %s\n", r, r.Sentence())
	}
	fmt.Fprintf(w, "\n%s %s, checked %s\n", rep.Method, rep.URL, rep.CheckedAt)
	width := 14
	if len(rep.Dialects) > 1 {
		width = 17 // "p1_structural v2"
	}
	for _, f := range rep.Fetches {
		fmt.Fprintf(w, "  %-*s %-4s %s\n", width, f.Role+" fetch", f.Method, fetchText(string(f.Outcome), f.Status, string(f.Error)))
	}
	if rep.Lint != nil {
		fmt.Fprintf(w, "  %-*s %d errors, %d warnings (%s)\n", width, "lint", rep.Lint.Errors, rep.Lint.Warnings, plural(rep.Lint.Entries, "entry", "entries"))
	}
	if s := rep.SelectedEntry; s != nil {
		fmt.Fprintf(w, "  %-*s %s accepts[%d]: x402 v%d, %s on %s\n", width, "selected", s.Leg, s.Index, s.X402Version, s.Scheme, s.Network)
	}
	if rep.TermsSHA256 != nil {
		fmt.Fprintf(w, "  %-*s %s\n", width, "terms_sha256", *rep.TermsSHA256)
	}
	if rep.Lint != nil {
		fmt.Fprintf(w, "  %-*s memo %s, nonce %s\n", width, "freshness", rep.Challenge.Memo, rep.Challenge.Nonce)
	}
	for _, pr := range append(append([]preflight.ProbeRecord{}, rep.Probes...), rep.MethodMatrix...) {
		if rep.Lint == nil {
			break
		}
		id := pr.ID
		if len(rep.Dialects) > 1 && pr.Dialect != 0 {
			id = fmt.Sprintf("%s v%d", pr.ID, pr.Dialect) // both dialects probed: say which
		}
		if !pr.Sent {
			fmt.Fprintf(w, "  %-*s %-4s not sent\n", width, id, pr.Method)
			continue
		}
		fmt.Fprintf(w, "  %-*s %-4s %s %s\n", width, id, pr.Method, *pr.Grade, fetchText(string(pr.Outcome), pr.Status, string(pr.Error)))
	}
	if rep.CORTX != nil {
		a := rep.CORTX.Action
		if a == "" {
			a = "not run"
		}
		fmt.Fprintf(w, "  %-*s %s\n", width, "cortx", a)
	}
}

// fetchText is outcomeText with a failed request's closed-form error:
// "(failed: dns_failed)".
func fetchText(outcome string, status int, fetchErr string) string {
	if outcome == "failed" && fetchErr != "" {
		return "(failed: " + fetchErr + ")"
	}
	return outcomeText(outcome, status)
}

func outcomeText(outcome string, status int) string {
	if status != 0 && (outcome == "ok" || outcome == "over_cap") {
		if outcome == "over_cap" {
			return fmt.Sprintf("(%d, body over cap)", status)
		}
		return fmt.Sprintf("(%d)", status)
	}
	return "(" + outcome + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
