//go:build !quick

package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

const monitorImportUsage = "monitor import --from URL [--from URL …] [--kind bazaar|wellknown|list] [--ops OPS] [--every DURATION] [--retire-after DURATION] [--dry-run] [--store sqlite:PATH|postgres://…] [--data-dir DIR] [--allow-private]"

const monitorImportNote = `Reads discovery catalogs and adds what they list to the monitor's endpoint set in the store:
a facilitator's Bazaar list (…/discovery/resources, paged), an origin's /.well-known/x402 manifest,
or a list of URLs (the kind is guessed from the URL unless --kind says). Only each resource's URL and
method are kept; ids are derived from them, so every source and instance derives the same one, and a
resource listed by several sources is one endpoint listing them all. Nothing listed is fetched (the
monitor's checks do that); catalogs are read through the guarded client. A running monitor on the same
store picks the change up. --dry-run prints what would be imported and writes nothing. docs/monitor.md.
exit status: 0 imported; 1 a catalog or the store failed; 2 bad usage.`

// opsToken reads the API's bearer token from the environment variable
// named (none named: no token, a read-only API).
func opsToken(e Env, name string) ([]byte, error) {
	if name == "" {
		return nil, nil
	}
	v := e.Getenv(name)
	switch {
	case v == "":
		return nil, badFlag{fmt.Sprintf("--ops-token-env: %s is not set", name)}
	case len(v) < minOpsToken:
		return nil, badFlag{fmt.Sprintf("--ops-token-env: the token in %s is shorter than %d bytes", name, minOpsToken)}
	}
	return []byte(v), nil
}

// minOpsToken is the shortest bearer token accepted.
const minOpsToken = 16

// catalogFetcher is the guarded client catalogs are read with.
func (e Env) catalogFetcher(allowPrivate bool) monitor.CatalogFetcher {
	if e.NewCatalogFetcher != nil {
		return e.NewCatalogFetcher(allowPrivate)
	}
	return monitor.NewCatalogFetcher(allowPrivate, buildinfo.UserAgent)
}

func runMonitorImport(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "monitor import", monitorImportUsage, monitorImportNote, storeNote)
	var (
		from                 stringList
		kind, opsList, every string
		retireAfter          string
		storeDSN, dataDir    string
		dryRun, allowPrivate bool
	)
	fs.Var(&from, "from", "a catalog `URL` (repeatable)")
	fs.StringVar(&kind, "kind", "", "the catalogs' `KIND`: bazaar, wellknown or list (default guessed from each URL)")
	fs.StringVar(&opsList, "ops", "preflight", "the imported endpoints' `OPS`, comma-separated")
	fs.StringVar(&every, "every", "1h", "the imported endpoints' check interval `DURATION`")
	fs.StringVar(&retireAfter, "retire-after", "7d", "retire an endpoint no source has listed for `DURATION`")
	fs.BoolVar(&dryRun, "dry-run", false, "print what would be imported; write nothing")
	fs.BoolVar(&allowPrivate, "allow-private", false, "allow catalogs and endpoints on loopback and private addresses (private deployments, tests)")
	registerStoreFlags(fs.FlagSet, &storeDSN, &dataDir)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "takes no arguments besides its flags")
	}
	if err := applyEnv(fs.FlagSet, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor import: %v\n", err)
		return exitUsage
	}
	if len(from) == 0 {
		return usageError(e, fs, "--from is required")
	}
	if len(from) > monitor.MaxSources {
		return usageError(e, fs, "at most %d --from", monitor.MaxSources)
	}
	opsOf := strings.Split(opsList, ",")
	for j, op := range opsOf {
		if !store.ValidMonitorOp(op) || slices.Contains(opsOf[:j], op) {
			return usageError(e, fs, "--ops: want distinct ops of preflight, lint, check, memo, probe")
		}
	}
	checkEvery, ok := monitor.ParseDuration(every)
	if !ok || checkEvery < monitor.MinEvery || checkEvery > monitor.MaxEvery {
		return usageError(e, fs, "--every: want a duration from 1s to 30d")
	}
	grace, ok := monitor.ParseDuration(retireAfter)
	if !ok || grace < monitor.MinRetention || grace > monitor.MaxRetention {
		return usageError(e, fs, "--retire-after: want a duration from 1h to 3650d")
	}
	var sources []monitor.Source
	for _, u := range from {
		src, err := monitor.ImportSource(u, kind, opsOf, checkEvery)
		if err != nil {
			return usageError(e, fs, "--from: a URL refused by the URL policy, or a bad --kind")
		}
		sources = append(sources, src)
	}
	if _, ok := storeBackend(storeDSN, dataDir); !ok {
		return usageError(e, fs, "--store must be sqlite:PATH or postgres://…")
	}
	m := &monitor.Monitor{Config: &monitor.Config{RetireAfter: grace}, Now: e.now()}
	imp := &monitor.Importer{Monitor: m, Fetch: e.catalogFetcher(allowPrivate), AllowPrivate: allowPrivate}
	if !dryRun {
		st, err := openStore(ctx, storeDSN, dataDir)
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability monitor import: %v\n", err)
			return ExitInternal
		}
		defer st.Close()
		cat, ok := st.(store.EndpointCatalog)
		hist, ok2 := st.(store.History)
		if !ok || !ok2 {
			fmt.Fprintln(e.Stderr, "payability monitor import: the store keeps no endpoints")
			return ExitInternal
		}
		m.Catalog, m.History = cat, hist
	}
	code := ExitOK
	for _, src := range sources {
		var res monitor.ImportResult
		if dryRun {
			res, err = imp.Read(ctx, src)
		} else {
			res, err = imp.Import(ctx, src)
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability monitor import: %s (%s): %v\n", src.URL, src.Kind, importError(err))
			code = ExitInternal
			continue
		}
		printImport(e, res, dryRun)
	}
	if !dryRun && code == ExitOK {
		n, err := m.Retire(ctx)
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability monitor import: retire: %v\n", err)
			return ExitInternal
		}
		fmt.Fprintf(e.Stdout, "retired: %d endpoints no source listed for %s\n", n, retireAfter)
	}
	return code
}

// importError is a closed-form sentence for an import's error.
func importError(err error) string {
	var ce *monitor.CatalogError
	switch {
	case errors.As(err, &ce):
		return ce.Error()
	case errors.Is(err, store.ErrTooManyEndpoints):
		return fmt.Sprintf("the store would hold more than %d endpoints; nothing of this source was written", store.MaxEndpoints)
	}
	return "store error: " + err.Error()
}

func printImport(e Env, res monitor.ImportResult, dryRun bool) {
	verb := "imported"
	if dryRun {
		verb = "would import"
	}
	fmt.Fprintf(e.Stdout, "%s (%s): %d pages, %d listed, %s %d endpoints", res.Source, res.Kind, res.Pages, res.Listed, verb, len(res.Endpoints))
	if len(res.Skipped) > 0 {
		var reasons []string
		for k := range res.Skipped {
			reasons = append(reasons, k)
		}
		sort.Strings(reasons)
		fmt.Fprint(e.Stdout, "; skipped:")
		for _, k := range reasons {
			fmt.Fprintf(e.Stdout, " %s=%d", k, res.Skipped[k])
		}
	}
	fmt.Fprintln(e.Stdout)
	if dryRun {
		for _, ep := range res.Endpoints {
			fmt.Fprintf(e.Stdout, "  %s %s %s\n", ep.ID, ep.Method, ep.URL)
		}
	}
}
