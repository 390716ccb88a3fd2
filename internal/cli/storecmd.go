//go:build !quick

package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store/postgres"
)

func init() {
	register(command{"store", summaryOf("store"), runStore})
}

// migrateTimeout bounds `store migrate`: waiting behind another instance's
// migrations is expected, waiting forever on an unreachable database is not.
const migrateTimeout = 2 * time.Minute

const storeUsage = "store migrate [--store sqlite:PATH|postgres://…] [--data-dir DIR]"

func runStore(ctx context.Context, e Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(e.Stderr, "usage: payability %s\n", storeUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintf(e.Stdout, "usage: payability %s\n", storeUsage)
		return ExitOK
	case "migrate":
		return runStoreMigrate(ctx, e, args[1:])
	}
	fmt.Fprintf(e.Stderr, "payability store: unknown subcommand %q\nusage: payability %s\n", args[0], storeUsage)
	return exitUsage
}

// runStoreMigrate applies the embedded schema migrations to the store that
// serve would open with the same flags. serve applies them too at start (on
// PostgreSQL under an advisory lock, so instances starting together do not
// race); running them first lets a deployment upgrade the schema once,
// before it rolls the instances.
func runStoreMigrate(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "store migrate", storeUsage,
		`Applies the embedded schema migrations to the store serve would open with the same flags,
then River's (the monitor's scheduler, same database). serve and monitor also apply them at start.
exit status: 0 the schema is current; 1 the store failed; 2 bad usage.`, storeNote)
	var dsn, dataDir string
	registerStoreFlags(fs.FlagSet, &dsn, &dataDir)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "takes no arguments besides its flags")
	}
	if err := applyEnv(fs.FlagSet, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability store migrate: %v\n", err)
		return exitUsage
	}
	backend, ok := storeBackend(dsn, dataDir)
	if !ok {
		fmt.Fprintln(e.Stderr, "payability store migrate: --store must be sqlite:PATH or postgres://…")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	if backend == "postgres" {
		err = postgres.Migrate(ctx, dsn)
	} else {
		// Opening the embedded store applies its migrations.
		st, oerr := openStore(ctx, dsn, dataDir)
		if err = oerr; err == nil {
			err = st.Close()
		}
	}
	if err == nil {
		// River's own tables (the monitor's scheduler), in the same
		// database, after ours.
		err = schedule.Migrate(ctx, scheduleDB(dsn, dataDir))
	}
	if err != nil {
		// The error never carries the connection string: pgx leaves the
		// password out and postgres.Open refuses to echo one it cannot parse.
		fmt.Fprintf(e.Stderr, "payability store migrate: %v\n", err)
		return ExitInternal
	}
	fmt.Fprintf(e.Stdout, "store migrated: %s schema is current\n", backend)
	return ExitOK
}

// registerStoreFlags registers serve's flags that name the store, so both
// commands (and PAYABILITY_STORE, PAYABILITY_DATA_DIR) select the same one.
func registerStoreFlags(fs *flag.FlagSet, dsn, dataDir *string) {
	fs.StringVar(dsn, "store", "", "the store `DSN`: sqlite:PATH or postgres://… (default sqlite:<data-dir>/payability.db)")
	fs.StringVar(dataDir, "data-dir", "payability-data", "the data directory `DIR`: the embedded store lives there when --store is not given")
}

// storeBackend names the backend a --store value selects, for messages: the
// SQLite file path, or "postgres" (never the connection string, which may
// hold a password).
func storeBackend(dsn, dataDir string) (string, bool) {
	switch {
	case dsn == "":
		return "sqlite " + filepath.Join(dataDir, "payability.db"), true
	case strings.HasPrefix(dsn, "sqlite:") && len(dsn) > len("sqlite:"):
		return "sqlite " + strings.TrimPrefix(dsn, "sqlite:"), true
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", true
	}
	return "", false
}
