//go:build !quick

package cli

import (
	"context"
	"fmt"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

const monitorReportUsage = "monitor report [--format json|csv|markdown] [--config FILE] [--store sqlite:PATH|postgres://…] [--data-dir DIR] [--key-dir DIR]"

const monitorReportNote = `Prints the ecosystem report of the monitor's store (docs/monitor.md, "The ecosystem report"):
the GO/HOLD/STOP and lint conforms/warnings/errors of every monitored endpoint's newest observation,
by network, scheme, x402 version and source, the most frequent reason codes and rule ids, and the
daily counts over the retention window (--config's retention, default 30d). It reads the store
directly (aggregate queries); no monitor needs to run. The JSON is signed with the monitor's key
(--key-dir, default <data-dir>; verify it with the monitor's /.well-known/jwks.json).
exit status: 0 printed; 1 the store or the key failed; 2 bad usage or a bad configuration.`

func runMonitorReport(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "monitor report", monitorReportUsage, monitorReportNote, storeNote)
	var format, config, dsn, dataDir, keyDir string
	fs.StringVar(&format, "format", "json", "the rendering: `json` (signed), csv or markdown")
	fs.StringVar(&config, "config", "", "the monitor configuration `FILE`, for its retention (default 30d)")
	registerStoreFlags(fs.FlagSet, &dsn, &dataDir)
	fs.StringVar(&keyDir, "key-dir", "", "the key `DIR` whose signing-key.pem signs the JSON (default <data-dir>)")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "takes no arguments besides its flags")
	}
	if err := applyEnv(fs.FlagSet, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor report: %v\n", err)
		return exitUsage
	}
	if !oneOf(format, monitor.ReportFormats) {
		return usageError(e, fs, "--format must be one of %s", quoteList(monitor.ReportFormats))
	}
	retention := monitor.DefaultRetention
	if config != "" {
		cfg, err := loadMonitorConfig(config)
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability monitor report: %v\n", err)
			return exitUsage
		}
		retention = cfg.Retention
	}
	if _, ok := storeBackend(dsn, dataDir); !ok {
		fmt.Fprintln(e.Stderr, "payability monitor report: --store must be sqlite:PATH or postgres://…")
		return exitUsage
	}
	st, err := openStore(ctx, dsn, dataDir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor report: %v\n", err)
		return ExitInternal
	}
	defer st.Close()
	eco, ok := st.(store.Ecosystem)
	if !ok {
		fmt.Fprintln(e.Stderr, "payability monitor report: the store keeps no history")
		return ExitInternal
	}
	r, err := monitor.BuildReport(ctx, eco, e.now()(), retention)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor report: %v\n", err)
		return ExitInternal
	}
	switch format {
	case "csv":
		err = monitor.WriteReportCSV(e.Stdout, r)
	case "markdown":
		err = monitor.WriteReportMarkdown(e.Stdout, r)
	default:
		var signed []byte
		if signed, err = signReport(keyDir, dataDir, r); err == nil {
			_, err = e.Stdout.Write(append(signed, '\n'))
		}
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor report: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

// signReport signs r with the key of keyDir (default dataDir), the key the
// monitor signs its records with.
func signReport(keyDir, dataDir string, r monitor.EcosystemReport) ([]byte, error) {
	if keyDir == "" {
		keyDir = dataDir
	}
	key, _, err := loadKeys(keyDir, "")
	if err != nil {
		return nil, err
	}
	return report.Sign(r, key)
}
