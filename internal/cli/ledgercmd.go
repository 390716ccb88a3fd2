//go:build !quick

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/ledger"
	"github.com/exchangerebel/payability/internal/store"
)

func init() {
	register(command{"ledger", summaryOf("ledger"), runLedger})
}

const ledgerUsage = `ledger backfill [--rates-url URL]
       payability ledger refund ENTRY-ID --tx REFUND-TX-SIGNATURE [--op check|memo|probe|preflight|lint]
       payability ledger export --from YYYY-MM-DD --to YYYY-MM-DD [--format csv|json] [--summary]
       payability ledger tripwires [--format text|json]
  each also takes --store sqlite:PATH|postgres://… and --data-dir DIR, as serve does;
  run 'payability ledger <subcommand> -h' for its flags (docs/ledger.md)`

// backfillEvery is how often serve runs the CAD backfill.
const backfillEvery = time.Hour

func runLedger(ctx context.Context, e Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(e.Stderr, "usage: payability %s\n", ledgerUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintf(e.Stdout, "usage: payability %s\n", ledgerUsage)
		return ExitOK
	case "backfill":
		return runLedgerBackfill(ctx, e, args[1:])
	case "refund":
		return runLedgerRefund(ctx, e, args[1:])
	case "export":
		return runLedgerExport(ctx, e, args[1:])
	case "tripwires":
		return runLedgerTripwires(ctx, e, args[1:])
	}
	fmt.Fprintf(e.Stderr, "payability ledger: unknown subcommand %q\nusage: payability %s\n", args[0], ledgerUsage)
	return exitUsage
}

// ledgerUsages are the command lines of the ledger subcommands.
var ledgerUsages = map[string]string{
	"backfill":  "ledger backfill [--rates-url URL] [--store DSN] [--data-dir DIR]",
	"refund":    "ledger refund ENTRY-ID --tx REFUND-TX-SIGNATURE [--op check|memo|probe|preflight|lint] [--store DSN] [--data-dir DIR]",
	"export":    "ledger export --from YYYY-MM-DD --to YYYY-MM-DD [--format csv|json] [--summary] [--store DSN] [--data-dir DIR]",
	"tripwires": "ledger tripwires [--format text|json] [--store DSN] [--data-dir DIR]",
}

// ledgerNotes say what each ledger subcommand does and how it exits.
var ledgerNotes = map[string]string{
	"backfill": `Fills the CAD block of pending ledger entries from the Bank of Canada's FXUSDCAD rates
(docs/ledger.md); never rewrites a filled entry.
exit status: 0 done; 1 the store or the rate source failed; 2 bad usage.`,
	"refund": `Records a refund against one ledger entry (append-only; the entry is never edited).
exit status: 0 recorded; 2 bad usage, no such entry, already refunded, or a malformed refund tx (a Solana signature, or an EVM transaction hash on Base);
1 the store failed.`,
	"export": `Prints every ledger entry of the UTC days FROM..TO (both included) with its CAD block, or
with --summary the sums per day and op.
exit status: 0 written; 1 the store failed; 2 bad usage.`,
	"tripwires": `Prints the criteria's tripwires that our records can compute, per service, and Day-0.
exit status: 0 none fired; 3 a tripwire fired; 1 the store failed; 2 bad usage.`,
}

// storeNote ends the help of every command that opens the store.
const storeNote = "Every flag also reads PAYABILITY_<NAME> from the environment (--store → PAYABILITY_STORE);\nthe command line wins."

// ledgerCmd is what every ledger subcommand shares: its flag set and the
// store flags of serve.
type ledgerCmd struct {
	name         string
	fs           *flagSet
	dsn, dataDir string
}

func newLedgerCmd(e Env, name string) *ledgerCmd {
	c := &ledgerCmd{name: "ledger " + name, fs: newFlagSet(e, "ledger "+name, ledgerUsages[name], ledgerNotes[name], storeNote)}
	registerStoreFlags(c.fs.FlagSet, &c.dsn, &c.dataDir)
	return c
}

// parse parses args, then the environment (PAYABILITY_<FLAG>), and returns
// the positional arguments, or the exit status when there is nothing to run.
func (c *ledgerCmd) parse(e Env, args []string) ([]string, int, bool) {
	pos, err := parseFlags(e, c.fs, args)
	if err != nil {
		return nil, usageExit(err), false
	}
	if err := applyEnv(c.fs.FlagSet, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability %s: %v\n", c.name, err)
		return nil, exitUsage, false
	}
	if _, ok := storeBackend(c.dsn, c.dataDir); !ok {
		fmt.Fprintf(e.Stderr, "payability %s: --store must be sqlite:PATH or postgres://…\n", c.name)
		return nil, exitUsage, false
	}
	return pos, 0, true
}

func (c *ledgerCmd) open(ctx context.Context, e Env) (store.Store, bool) {
	st, err := openStore(ctx, c.dsn, c.dataDir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability %s: store: %v\n", c.name, err)
		return nil, false
	}
	return st, true
}

// registerRatesFlag registers --rates-url (serve and ledger backfill).
func registerRatesFlag(fs *flag.FlagSet, url *string) {
	fs.StringVar(url, "rates-url", ledger.DefaultValetURL,
		"base `URL` of the Bank of Canada Valet API (the FXUSDCAD rates of the CAD valuation); for serve, empty turns the hourly backfill off")
}

func runLedgerBackfill(ctx context.Context, e Env, args []string) int {
	c := newLedgerCmd(e, "backfill")
	var ratesURL string
	registerRatesFlag(c.fs.FlagSet, &ratesURL)
	pos, code, ok := c.parse(e, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(e, c.fs, "takes no arguments besides its flags")
	}
	if ratesURL == "" {
		return usageError(e, c.fs, "--rates-url is empty")
	}
	st, ok := c.open(ctx, e)
	if !ok {
		return ExitInternal
	}
	defer st.Close()
	res, err := ledger.Backfiller{Store: st, Rates: ledger.Valet{BaseURL: ratesURL}, Now: e.now()}.Run(ctx)
	fmt.Fprintf(e.Stdout, "backfill: %d pending, %d filled, %d still pending, %d rates newly cached\n",
		res.Pending, res.Filled, res.Pending-res.Filled, res.Fetched)
	if res.Stuck > 0 {
		fmt.Fprintf(e.Stdout, "backfill: %d of the pending entries are past their date with no published rate within %d days before it: look at them\n",
			res.Stuck, ledger.MaxGapDays)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger backfill: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

func runLedgerRefund(ctx context.Context, e Env, args []string) int {
	c := newLedgerCmd(e, "refund")
	tx := c.fs.String("tx", "", "the base58 `SIGNATURE` of the refund transaction (required)")
	op := c.fs.String("op", "", "the entry's `OP`: check, memo, probe, preflight or lint (default: the entry is found by its id)")
	pos, code, ok := c.parse(e, args)
	switch {
	case !ok:
		return code
	case len(pos) != 1:
		return usageError(e, c.fs, "give exactly one ENTRY-ID")
	case *tx == "":
		return usageError(e, c.fs, "--tx is required")
	case *op != "" && !store.Op(*op).Valid():
		return usageError(e, c.fs, "--op must be check, memo, probe, preflight or lint")
	}
	st, ok := c.open(ctx, e)
	if !ok {
		return ExitInternal
	}
	defer st.Close()
	r, err := ledger.Refund(ctx, st, store.Op(*op), pos[0], *tx, e.now()())
	switch {
	case errors.Is(err, store.ErrNoEntry):
		fmt.Fprintln(e.Stderr, "payability ledger refund: no ledger entry has that id")
		return ExitRefused
	case errors.Is(err, store.ErrAlreadyRefunded):
		fmt.Fprintln(e.Stderr, "payability ledger refund: that entry already has a refund recorded; refunds are never edited")
		return ExitRefused
	case errors.Is(err, ledger.ErrRefundTx), errors.Is(err, store.ErrInvalidRefund):
		fmt.Fprintf(e.Stderr, "payability ledger refund: %v\n", ledger.ErrRefundTx)
		return ExitRefused
	case err != nil:
		fmt.Fprintf(e.Stderr, "payability ledger refund: %v\n", err)
		return ExitInternal
	}
	fmt.Fprintf(e.Stdout, "refund %s recorded against %s entry %s (tx %s) at %s\n",
		r.ID, r.Op, r.EntryID, r.Tx, r.Time.UTC().Format(store.TimestampLayout))
	return ExitOK
}

func runLedgerExport(ctx context.Context, e Env, args []string) int {
	c := newLedgerCmd(e, "export")
	from := c.fs.String("from", "", "the first UTC day, `YYYY-MM-DD` (required)")
	to := c.fs.String("to", "", "the last UTC day, `YYYY-MM-DD`, included (required)")
	format := c.fs.String("format", "csv", "`FORMAT`: csv or json")
	summary := c.fs.Bool("summary", false, "sums per UTC day and op (and totals) instead of one row per entry")
	pos, code, ok := c.parse(e, args)
	switch {
	case !ok:
		return code
	case len(pos) != 0:
		return usageError(e, c.fs, "takes no arguments besides its flags")
	case *from == "" || *to == "":
		return usageError(e, c.fs, "--from and --to are required")
	case *format != "csv" && *format != "json":
		return usageError(e, c.fs, "--format must be csv or json")
	}
	r := ledger.Range{From: *from, To: *to}
	if _, _, err := r.Bounds(); err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger export: %v\n", err)
		return exitUsage
	}
	st, ok := c.open(ctx, e)
	if !ok {
		return ExitInternal
	}
	defer st.Close()
	rows, err := ledger.Export(ctx, st, r)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger export: %v\n", err)
		return ExitInternal
	}
	var out any = rows
	if *summary {
		if out, err = ledger.Summarize(rows); err != nil {
			fmt.Fprintf(e.Stderr, "payability ledger export: %v\n", err)
			return ExitInternal
		}
	}
	write := ledger.WriteCSV
	if *format == "json" {
		write = ledger.WriteJSON
	}
	if err := write(e.Stdout, out); err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger export: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

// runLedgerTripwires prints the tripwires; it exits ExitUnexpected (3) when
// one fired, so a cron job can alert on the status alone.
func runLedgerTripwires(ctx context.Context, e Env, args []string) int {
	c := newLedgerCmd(e, "tripwires")
	format := c.fs.String("format", "text", "`FORMAT`: text or json")
	pos, code, ok := c.parse(e, args)
	switch {
	case !ok:
		return code
	case len(pos) != 0:
		return usageError(e, c.fs, "takes no arguments besides its flags")
	case *format != "text" && *format != "json":
		return usageError(e, c.fs, "--format must be text or json")
	}
	st, ok := c.open(ctx, e)
	if !ok {
		return ExitInternal
	}
	defer st.Close()
	t, err := st.Tallies(ctx)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger tripwires: %v\n", err)
		return ExitInternal
	}
	s := ledger.Evaluate(t, corpusPassesByService(), e.now()())
	if *format == "json" {
		err = ledger.WriteJSON(e.Stdout, s)
	} else {
		err = ledger.WriteStatus(e.Stdout, s)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger tripwires: %v\n", err)
		return ExitInternal
	}
	if s.Fired {
		return ExitUnexpected
	}
	return ExitOK
}

// corpusPassesByService runs each service's pinned corpus through the
// graders: the state of serve's corpus guard.
func corpusPassesByService() map[string]bool {
	m := map[string]bool{}
	for _, svc := range ledger.Services {
		m[svc.Name] = corpus.Passes(svc.Name)
	}
	return m
}

// startBackfill runs the CAD backfill at once and then hourly until ctx ends
// or the returned stop is called (stop waits for a run in progress, so the
// store can be closed after it). An empty --rates-url turns it off.
func startBackfill(ctx context.Context, ratesURL string, st store.Store, now func() time.Time, logger *slog.Logger) (stop func()) {
	if ratesURL == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b := ledger.Backfiller{Store: st, Rates: ledger.Valet{BaseURL: ratesURL}, Now: now}
	go func() {
		defer close(done)
		b.Every(ctx, backfillEvery, func(r ledger.BackfillResult, err error) {
			if err != nil {
				logger.Warn("ledger backfill failed; pending entries stay pending", "error", err.Error(),
					"pending", r.Pending, "filled", r.Filled)
				return
			}
			if r.Pending > 0 {
				logger.Info("ledger backfill", "pending", r.Pending, "filled", r.Filled, "stuck", r.Stuck)
			}
		})
	}()
	return func() {
		cancel()
		<-done
	}
}
