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
	register(command{"ledger", "the operator's accounting: ledger backfill | refund | export | tripwires", runLedger})
}

const ledgerUsage = `ledger backfill [--rates-url URL]
       payability ledger refund ENTRY-ID --tx REFUND-TX-SIGNATURE [--op check|memo|probe]
       payability ledger export --from YYYY-MM-DD --to YYYY-MM-DD [--format csv|json] [--summary]
       payability ledger tripwires [--format text|json]
  each also takes --store sqlite:PATH|postgres://… and --data-dir DIR, as serve does`

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

// ledgerCmd is what every ledger subcommand shares: its flag set and the
// store flags of serve.
type ledgerCmd struct {
	name         string
	fs           *flag.FlagSet
	dsn, dataDir string
}

func newLedgerCmd(e Env, name string) *ledgerCmd {
	c := &ledgerCmd{name: "ledger " + name, fs: newFlagSet(e, "ledger "+name, ledgerUsage)}
	registerStoreFlags(c.fs, &c.dsn, &c.dataDir)
	return c
}

// parse parses args, then the environment (PAYABILITY_<FLAG>), and returns
// the positional arguments.
func (c *ledgerCmd) parse(e Env, args []string) ([]string, bool) {
	pos, err := parseFlags(c.fs, args)
	if err != nil {
		return nil, false
	}
	if err := applyEnv(c.fs, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability %s: %v\n", c.name, err)
		return nil, false
	}
	return pos, true
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
		"base URL of the Bank of Canada Valet API (the FXUSDCAD series of the CAD valuation); empty turns serve's hourly backfill off")
}

func runLedgerBackfill(ctx context.Context, e Env, args []string) int {
	c := newLedgerCmd(e, "backfill")
	var ratesURL string
	registerRatesFlag(c.fs, &ratesURL)
	pos, ok := c.parse(e, args)
	if !ok || len(pos) != 0 {
		return exitUsage
	}
	if ratesURL == "" {
		fmt.Fprintln(e.Stderr, "payability ledger backfill: --rates-url is empty")
		return exitUsage
	}
	st, ok := c.open(ctx, e)
	if !ok {
		return ExitInternal
	}
	defer st.Close()
	res, err := ledger.Backfiller{Store: st, Rates: ledger.Valet{BaseURL: ratesURL}, Now: e.now()}.Run(ctx)
	fmt.Fprintf(e.Stdout, "backfill: %d pending, %d filled, %d still pending (%d past their date with no rate within %d days: look at them), %d rates newly cached\n",
		res.Pending, res.Filled, res.Pending-res.Filled, res.Stuck, ledger.MaxGapDays, res.Fetched)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability ledger backfill: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

func runLedgerRefund(ctx context.Context, e Env, args []string) int {
	c := newLedgerCmd(e, "refund")
	tx := c.fs.String("tx", "", "the signature of the refund transaction (required)")
	op := c.fs.String("op", "", "the entry's op: check, memo or probe (default: found by its id)")
	pos, ok := c.parse(e, args)
	if !ok || len(pos) != 1 || *tx == "" {
		c.fs.Usage()
		return exitUsage
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
	from := c.fs.String("from", "", "first UTC day, YYYY-MM-DD (required)")
	to := c.fs.String("to", "", "last UTC day, YYYY-MM-DD, included (required)")
	format := c.fs.String("format", "csv", "csv | json")
	summary := c.fs.Bool("summary", false, "sums per UTC day and op (and totals) instead of one row per entry")
	pos, ok := c.parse(e, args)
	if !ok || len(pos) != 0 || *from == "" || *to == "" || (*format != "csv" && *format != "json") {
		c.fs.Usage()
		return exitUsage
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
	format := c.fs.String("format", "text", "text | json")
	pos, ok := c.parse(e, args)
	if !ok || len(pos) != 0 || (*format != "text" && *format != "json") {
		c.fs.Usage()
		return exitUsage
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
		s, err := corpus.Run(svc.Name)
		m[svc.Name] = err == nil && s.OK()
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
