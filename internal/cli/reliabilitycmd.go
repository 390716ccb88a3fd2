package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/exchangerebel/payability/internal/reliability"
)

func init() {
	register(command{"reliability", "check a CORTX reliability record, bound to the endpoint's own 402 terms, before paying", runReliability})
}

// Exit statuses of reliability, one per action of the decision table.
const (
	ExitReliabilityWarn       = 10
	ExitReliabilityDoNotCall  = 20
	ExitReliabilityUnverified = 30
)

var reliabilityExit = map[reliability.Action]int{
	reliability.Favourable: ExitOK,
	reliability.Warn:       ExitReliabilityWarn,
	reliability.DoNotCall:  ExitReliabilityDoNotCall,
	reliability.Unverified: ExitReliabilityUnverified,
}

func runReliability(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "reliability",
		"reliability --service-id ID --intended-url URL [--source cortx|payability] [--api URL] [--json] [--allow-private] [--debug]",
		`The result is advisory: it never authorises a payment (docs/reliability.md). --source payability
reads a payability monitor's signed record (--api is then the monitor's base URL): its signature is
verified against the monitor's JWKS and its terms_sha256 recomputed from the endpoint's live 402.
exit status: 0 favourable; 10 warn; 20 do not call; 30 unverified (not monitored, or the record
failed validation or binding); 1 internal error; 2 bad usage or a refused input.`)
	serviceID := fs.String("service-id", "", "the CORTX service `ID` (from the owner's badge, status page or docs; required)")
	intended := fs.String("intended-url", "", "the https `URL` you are about to pay (required)")
	api := fs.String("api", reliability.DefaultAPI, "the CORTX API base `URL`")
	asJSON := fs.Bool("json", false, "print the decision, the record and every finding as JSON")
	allowPrivate := fs.Bool("allow-private", false, "allow loopback and private addresses (and an http API), for a local or staging API and seller")
	debug := fs.Bool("debug", false, "dump the fetched responses, cleaned and capped, to stderr")
	source := fs.String("source", reliability.SourceCORTX, "where the record comes from: `SOURCE` is cortx or payability (a payability monitor)")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	switch {
	case len(pos) != 0:
		return usageError(e, fs, "takes no arguments besides its flags")
	case *serviceID == "" || *intended == "":
		return usageError(e, fs, "--service-id and --intended-url are required")
	}
	client := reliability.Client{
		Fetcher:   e.fetcher(*allowPrivate),
		API:       *api,
		AllowHTTP: *allowPrivate,
		Now:       e.now(),
	}
	switch *source {
	case reliability.SourceCORTX:
	case reliability.SourcePayability:
		if *api == reliability.DefaultAPI {
			return usageError(e, fs, "--source payability needs --api: the monitor's base URL")
		}
		return runPayabilityRecord(ctx, e, client, *serviceID, *intended, *asJSON, *debug)
	default:
		return usageError(e, fs, "--source must be cortx or payability")
	}
	res, err := client.Check(ctx, *serviceID, *intended)
	if err != nil {
		var ie *reliability.InputError
		if errors.As(err, &ie) {
			fmt.Fprintf(e.Stderr, "payability: %s\n", ie.Error())
			return exitUsage
		}
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	if *debug {
		if err := reliability.RenderDebug(e.Stderr, res); err != nil {
			return ExitInternal
		}
	}
	if *asJSON {
		err = reliability.RenderJSON(e.Stdout, res)
	} else {
		err = reliability.Render(e.Stdout, res)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: writing the result failed: %v\n", err)
		return ExitInternal
	}
	if !*allowPrivate && (nonPublicLiteral(*api) || nonPublicLiteral(*intended)) && fetchFailedFinding(res) {
		fmt.Fprintln(e.Stderr, "payability: note: the address guard refuses loopback and private addresses; use --allow-private for a local or staging API and seller")
	}
	code, ok := reliabilityExit[res.Decision.Action]
	if !ok {
		return ExitInternal
	}
	return code
}

// fetchFailedFinding reports whether a fetch of the check got no response.
func fetchFailedFinding(res reliability.Result) bool {
	for _, f := range res.Findings {
		if f.Code == reliability.CodeFetchFailed {
			return true
		}
	}
	return false
}

// runPayabilityRecord checks a payability monitor's signed record.
func runPayabilityRecord(ctx context.Context, e Env, client reliability.Client, serviceID, intended string, asJSON, debug bool) int {
	res, err := client.CheckPayability(ctx, serviceID, intended)
	if err != nil {
		var ie *reliability.InputError
		if errors.As(err, &ie) {
			fmt.Fprintf(e.Stderr, "payability: %s\n", ie.Error())
			return exitUsage
		}
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	if debug {
		if err := reliability.RenderDebug(e.Stderr, reliability.Result{Debug: res.Debug}); err != nil {
			return ExitInternal
		}
	}
	if asJSON {
		err = reliability.RenderPayabilityJSON(e.Stdout, res)
	} else {
		err = reliability.RenderPayability(e.Stdout, res)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: writing the result failed: %v\n", err)
		return ExitInternal
	}
	code, ok := reliabilityExit[res.Decision.Action]
	if !ok {
		return ExitInternal
	}
	return code
}
