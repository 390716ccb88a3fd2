//go:build !quick

package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/health"
	"github.com/exchangerebel/payability/internal/ledger"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/server"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/target"
)

func init() {
	register(command{"serve", summaryOf("serve"), runServe})
}

// serveFlags are the flags of serve; every one also reads PAYABILITY_<NAME>.
type serveFlags struct {
	addr, storeDSN, dataDir, signingKey, publicURL, service string
	payTo, tokenAccount, solanaRPC, network, commitment     string
	facilitator                                             string
	evmPayTo, evmNetwork, evmRPC                            string
	ratesURL                                                string
	monitor                                                 string
	allowPrivate                                            bool
	house                                                   stringList
	maxTimeout                                              int
	freePerSource, maxConns                                 int
	// x402-preflight: the prices of its two ops (USD) and its free allowance.
	pricePreflight, priceLint usdPrice
	freePerCallerX402         int
}

// usdPrice is a --price-* value: decimal US dollars, at most six decimals
// (USDC's), held as USDC atomic units.
type usdPrice uint64

func (p *usdPrice) String() string {
	if p == nil {
		return ""
	}
	return strings.TrimPrefix(server.PriceLabel(uint64(*p)), "$")
}

// Set reads "0.02" or "$0.02": digits, an optional point and at most six
// decimals; more than zero, at most $1,000.
func (p *usdPrice) Set(v string) error {
	bad := errors.New("want decimal US dollars with at most 6 decimals, more than 0 and at most 1000 (e.g. 0.02)")
	v = strings.TrimPrefix(v, "$")
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" {
		return bad
	}
	for len(frac) < 6 {
		frac += "0"
	}
	w, err1 := strconv.ParseUint(whole, 10, 32)
	f, err2 := strconv.ParseUint(frac, 10, 32)
	units := w*1_000_000 + f
	if err1 != nil || err2 != nil || units == 0 || units > 1000*1_000_000 {
		return bad
	}
	*p = usdPrice(units)
	return nil
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8402", "the listen address `HOST:PORT`")
	fs.StringVar(&f.storeDSN, "store", "", "the store `DSN`: sqlite:PATH or postgres://… (default sqlite:<data-dir>/payability.db)")
	fs.StringVar(&f.dataDir, "data-dir", "payability-data", "the data directory `DIR`: keys, and the embedded store (created mode 0700)")
	fs.StringVar(&f.signingKey, "signing-key", "", "the Ed25519 signing key `FILE` (PKCS#8 PEM) (default <data-dir>/signing-key.pem, created on first start)")
	fs.StringVar(&f.publicURL, "public-url", "", "the base `URL` clients see, behind a proxy (default: taken from each request)")
	fs.StringVar(&f.service, "service", server.ServeAll, "which services to run: `NAME` is payability-verdict, rail-probe or all")
	fs.StringVar(&f.payTo, "pay-to", "", "the Solana `WALLET` that owns the USDC token account")
	fs.StringVar(&f.tokenAccount, "token-account", "", "the USDC token `ACCOUNT` payments go to")
	fs.StringVar(&f.solanaRPC, "solana-rpc", "", "the Solana JSON-RPC `URL` of the direct rail (with --facilitator: also reads each settled transaction's fee)")
	fs.StringVar(&f.network, "network", "solana", "the Solana `NETWORK`: solana or solana-devnet")
	fs.StringVar(&f.commitment, "commitment", "confirmed", "the commitment `LEVEL` of getTransaction: confirmed or finalized")
	fs.StringVar(&f.facilitator, "facilitator", "", "the x402 facilitator `URL` of the facilitator rail")
	fs.StringVar(&f.evmPayTo, "evm-pay-to", "", "also take USDC on Base through the facilitator: the EVM `ADDRESS` it is paid to (needs --facilitator)")
	fs.StringVar(&f.evmNetwork, "evm-network", gate.Base.CAIP2, "the Base `NETWORK` of --evm-pay-to: eip155:8453 (Base) or eip155:84532 (Base Sepolia)")
	fs.StringVar(&f.evmRPC, "evm-rpc", "", "an EVM JSON-RPC `URL` on --evm-network: each settled EVM payment's receipt must show the USDC transfer before the report is released")
	fs.BoolVar(&f.allowPrivate, "allow-private-targets", false, "allow targets on loopback and private addresses (private deployments, tests)")
	fs.Var(&f.house, "house-wallet", "one of the operator's own `WALLET`s (repeatable): its payments are house proofs, never sales")
	fs.IntVar(&f.maxTimeout, "max-timeout-seconds", 120, "the maxTimeoutSeconds advertised in challenges, `N` seconds")
	fs.IntVar(&f.freePerSource, "free-per-source", server.DefaultFreePerSource,
		"free pre-checks a day per client address (IPv4 /32, IPv6 /64), all callers together, per service: `N`, on top of the published 100 per wallet")
	f.pricePreflight, f.priceLint = usdPrice(server.DefaultPricePreflight), usdPrice(server.DefaultPriceLint)
	fs.Var(&f.pricePreflight, "price-preflight", "the price of one x402-preflight preflight record, `USD` (USDC atomic units in the challenge)")
	fs.Var(&f.priceLint, "price-lint", "the price of one x402-preflight lint report, `USD` (USDC atomic units in the challenge)")
	fs.IntVar(&f.freePerCallerX402, "free-per-caller-x402", server.DefaultFreePerCallerX402,
		"free x402-preflight pre-checks a day per caller wallet (or client address): `N`; the seed services' allowance is their criteria's")
	fs.IntVar(&f.maxConns, "max-conns", server.DefaultMaxConns, "open client connections at most, `N`; more wait in the listen backlog")
	registerRatesFlag(fs, &f.ratesURL)
	fs.StringVar(&f.monitor, "monitor", "", "also run the monitor with this configuration `FILE` in the same process (docs/monitor.md)")
}

// serveNote ends serve's help.
const serveNote = `Paid ops need a working payment rail: --pay-to, --token-account and --solana-rpc (direct),
or --facilitator with --pay-to and --token-account. Every flag also reads PAYABILITY_<NAME> from
the environment (--pay-to → PAYABILITY_PAY_TO); the command line wins. docs/operations.md.
exit status: 0 shut down gracefully; 1 could not start or serve; 2 bad usage.`

// badFlag is a serve configuration the flags themselves make impossible: bad
// usage (exit 2), as opposed to a rail or store that does not work (exit 1).
type badFlag struct{ msg string }

func (b badFlag) Error() string { return b.msg }

// applyEnv sets every flag not given on the command line from PAYABILITY_<NAME>.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		name := "PAYABILITY_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %v", name, e)
			}
		}
	})
	return err
}

// openStore opens the store a --store value names.
func openStore(ctx context.Context, dsn, dataDir string) (store.Store, error) {
	switch {
	case dsn == "":
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, err
		}
		return sqlite.Open(ctx, dataDir+"/payability.db")
	case strings.HasPrefix(dsn, "sqlite:"):
		return sqlite.Open(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return postgres.Open(ctx, dsn, postgres.Options{UseDBClock: true})
	}
	return nil, errors.New("--store must be sqlite:PATH or postgres://…")
}

func runServe(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "serve", "serve --pay-to WALLET --token-account ACCOUNT --solana-rpc URL [flags]", serveNote)
	var f serveFlags
	f.register(fs.FlagSet)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "takes no arguments besides its flags")
	}
	if err := applyEnv(fs.FlagSet, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability serve: %v\n", err)
		return exitUsage
	}
	if _, ok := storeBackend(f.storeDSN, f.dataDir); !ok {
		fmt.Fprintln(e.Stderr, "payability serve: --store must be sqlite:PATH or postgres://…")
		return exitUsage
	}
	switch {
	case f.freePerSource < 1:
		return usageError(e, fs, "--free-per-source must be at least 1")
	case f.maxConns < 1:
		return usageError(e, fs, "--max-conns must be at least 1")
	case f.freePerCallerX402 < 1:
		return usageError(e, fs, "--free-per-caller-x402 must be at least 1")
	}
	// Listen first: a bad or busy address creates nothing (no data
	// directory, keys or store file).
	ln, err := listen(f.addr)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability serve: %v\n", err)
		var bf badFlag
		if errors.As(err, &bf) {
			return exitUsage
		}
		return ExitInternal
	}
	srv, cleanup, err := buildServer(ctx, e, f)
	if err != nil {
		ln.Close()
		fmt.Fprintf(e.Stderr, "payability serve: %v\n", err)
		var bf badFlag
		if errors.As(err, &bf) {
			return exitUsage
		}
		return ExitInternal
	}
	defer cleanup()
	var handler http.Handler = srv
	d := daemon{name: "serve", probe: health.New(srv.ReadyChecks()...)}
	if f.monitor != "" {
		h, reload, stop, code := serveWithMonitor(ctx, e, f, srv)
		if h == nil {
			ln.Close()
			return code
		}
		defer stop()
		handler, d.reload = h, reload
	}
	fmt.Fprintf(e.Stderr, "payability serve: %s\n", describeServe(f))
	return serveUntilDone(ctx, e, server.NewLimitListener(ln, f.maxConns), handler, d)
}

// listen opens the --addr listener. An address that is not HOST:PORT with
// a port from 0 to 65535, or whose host does not resolve or is not one of
// this machine's, is bad usage; any other failure (the port is taken, no
// permission) is a failure to start.
func listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, badFlag{"--addr must be HOST:PORT (for example 127.0.0.1:8402)"}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return nil, badFlag{"--addr: the port must be a number from 0 to 65535"}
	}
	if strings.ContainsAny(host, "/?#@ ") {
		return nil, badFlag{"--addr: the host must be an IP address or a name, without a path"}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var dnsErr *net.DNSError
		var addrErr *net.AddrError
		if errors.As(err, &dnsErr) || errors.As(err, &addrErr) || errors.Is(err, syscall.EADDRNOTAVAIL) {
			return nil, badFlag{"--addr: the host is not an address of this machine"}
		}
		return nil, fmt.Errorf("--addr: cannot listen (%s)", listenCause(err))
	}
	return ln, nil
}

// listenCause names why a listen failed, from a closed set.
func listenCause(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "the port is in use"
	case errors.Is(err, syscall.EACCES):
		return "no permission for the port"
	}
	return "failed"
}

// describeServe says, at start, what this instance sells and how it is paid:
// services, rails, store and the CAD backfill. It names no URL of the RPC
// node or the facilitator (they often carry an API key) and no connection
// string (it may carry a password).
func describeServe(f serveFlags) string {
	services := "payability-verdict, rail-probe and x402-preflight"
	if f.service != server.ServeAll {
		services = f.service
	}
	var rails []string
	if f.solanaRPC != "" {
		rails = append(rails, "direct ("+f.network+", "+f.commitment+")")
	}
	if f.facilitator != "" {
		rails = append(rails, "facilitator")
	}
	if f.evmPayTo != "" {
		rails = append(rails, "facilitator on "+f.evmNetwork)
	}
	store, _ := storeBackend(f.storeDSN, f.dataDir)
	backfill := "CAD backfill off (no rates source is contacted)"
	switch {
	case f.ratesURL == ledger.DefaultValetURL:
		backfill = "CAD backfill hourly: contacts the Bank of Canada Valet API (www.bankofcanada.ca) every hour; --rates-url= turns it off"
	case f.ratesURL != "":
		backfill = "CAD backfill hourly: contacts the --rates-url source every hour; --rates-url= turns it off"
	}
	targets := ""
	if f.allowPrivate {
		targets = "; private targets allowed"
	}
	return fmt.Sprintf("%s; rails: %s; store: %s; %s%s", services, strings.Join(rails, ", "), store, backfill, targets)
}

// serveUntilDone serves until ctx ends, then shuts down gracefully: requests
// in flight finish.
//
// d's probe answers /healthz and /readyz in front of h and is marked
// draining at shutdown; SIGHUP runs d's reload (watchHangups).
func serveUntilDone(ctx context.Context, e Env, ln net.Listener, h http.Handler, d daemon) int {
	if d.probe != nil {
		h = d.probe.Wrap(h)
	}
	stopHUP := watchHangups(ctx, e, d)
	defer stopHUP()
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 120 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
	fmt.Fprintf(e.Stderr, "payability %s serving on http://%s\n", buildinfo.Version, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(e.Stderr, "payability serve: %v\n", err)
		return ExitInternal
	case <-ctx.Done():
	}
	if d.probe != nil {
		d.probe.Drain()
	}
	fmt.Fprintln(e.Stderr, "payability: shutting down; finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		fmt.Fprintf(e.Stderr, "payability serve: shutdown: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

// buildServer wires a server from flags. It refuses to build one whose paid
// ops have no working payment rail: a priced route is never free by accident.
func buildServer(ctx context.Context, e Env, f serveFlags) (*server.Server, func(), error) {
	switch f.service {
	case server.ServeAll, criteria.ServicePayability, criteria.ServiceRailProbe, criteria.ServiceX402Preflight:
	default:
		return nil, nil, badFlag{"--service must be payability-verdict, rail-probe, x402-preflight or all"}
	}
	network, ok := gate.NetworkByName(f.network)
	if !ok {
		return nil, nil, badFlag{"--network must be solana or solana-devnet"}
	}
	for flagName, u := range map[string]string{"--solana-rpc": f.solanaRPC, "--facilitator": f.facilitator, "--evm-rpc": f.evmRPC} {
		if plainHTTPOffLoopback(u) {
			fmt.Fprintf(e.Stderr, "payability serve: warning: %s is plain http to a host that is not loopback; "+
				"anyone on the path could forge a payment confirmation: use https\n", flagName)
		}
	}
	if f.publicURL != "" {
		if err := target.CheckURL(f.publicURL); err != nil {
			return nil, nil, badFlag{"--public-url: " + err.Error()}
		}
	}
	terms := gate.Terms{Network: network, PayTo: f.payTo, TokenAccount: f.tokenAccount, MaxTimeoutSeconds: f.maxTimeout}
	evm, err := evmTerms(f)
	if err != nil {
		return nil, nil, err
	}
	terms.EVM = evm
	direct, err := directRail(ctx, f, network)
	if err != nil {
		return nil, nil, err
	}
	var facil *facilitator.Rail
	if f.facilitator != "" {
		if facil, err = facilitatorRail(ctx, f, &terms); err != nil {
			return nil, nil, err
		}
	}
	if direct == nil && facil == nil {
		return nil, nil, badFlag{"no working payment rail: give --pay-to, --token-account and --solana-rpc (direct rail) or --facilitator; a priced route is never served free"}
	}

	if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
		return nil, nil, err
	}
	var key report.Key
	if f.signingKey != "" {
		key, err = report.LoadKeyFile(f.signingKey)
	} else {
		key, _, err = report.LoadOrCreateKey(f.dataDir, rand.Reader)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("signing key: %v", err)
	}
	keys, err := report.LoadKeySet(f.dataDir, key)
	if err != nil {
		return nil, nil, fmt.Errorf("retired keys: %v", err)
	}
	memoKey, err := report.LoadOrCreateSecret(f.dataDir, "memo-key", 32, rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("memo key: %v", err)
	}
	st, err := openStore(ctx, f.storeDSN, f.dataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("store: %v", err)
	}

	now := e.now()
	ready := corpusPasses()
	if !ready {
		fmt.Fprintln(e.Stderr, "payability serve: the graders do not pass 100% of the pinned corpus; paid ops are refused until they do")
	}
	offers := map[string]gate.Offer{}
	pv, rp := criteria.Payability(), criteria.RailProbe()
	offers[ops.OpCheck] = gate.Offer{Op: ops.OpCheck, Price: uint64(pv.Price.USDCUnitsPerCall),
		Description: "payability-verdict check: one signed challenge payability verdict for one endpoint (" + pv.Price.Label + ")"}
	offers[ops.OpMemo] = gate.Offer{Op: ops.OpMemo, Price: uint64(pv.MemoOp.Price.USDCUnitsPerCall),
		Description: "payability-verdict memo: one signed memo-binding verdict over two back-to-back fetches of one endpoint (" + pv.MemoOp.Price.Label + ")"}
	offers[ops.OpProbe] = gate.Offer{Op: ops.OpProbe, Price: uint64(rp.Price.USDCUnitsPerCall),
		Description: "rail-probe probe: one signed rail-coverage and reject-shape report from the seven published invalid probes (" + rp.Price.Label + ")"}
	offers[ops.OpPreflight] = gate.Offer{Op: ops.OpPreflight, Price: uint64(f.pricePreflight),
		Description: "x402-preflight preflight: one signed x402-preflight/v1 record (GO, HOLD or STOP, bound to the terms by terms_sha256) for one endpoint ($" + f.pricePreflight.String() + ")"}
	offers[ops.OpLint] = gate.Offer{Op: ops.OpLint, Price: uint64(f.priceLint),
		Description: "x402-preflight lint: one signed x402-lint/v1 conformance report of one endpoint's 402 ($" + f.priceLint.String() + ")"}
	g := &gate.Gate{
		Terms: terms, Offers: offers, Direct: direct, Store: st, Now: now,
		Memos: gate.Memos{Key: memoKey, Now: now, Rand: rand.Reader},
	}
	if facil != nil {
		facil.Memos, facil.Now, facil.Store = g.Memos, now, st
		g.Facilitator = facil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	house := map[string]bool{}
	for _, w := range f.house {
		if gate.ValidEVMAddress(w) {
			// The rail records EVM payers in their EIP-55 form.
			w = lint.EIP55(w)
		}
		house[w] = true
	}
	logger := slog.New(slog.NewTextHandler(e.Stderr, nil))
	srv, err := server.New(server.Config{
		Service: f.service, PublicURL: f.publicURL, Gate: g,
		Runner: ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: f.allowPrivate, UserAgent: buildinfo.UserAgent}), Now: now},
		Key:    key, KeySet: keys, Store: st, Registry: reg, Now: now, Logger: logger,
		HouseWallets: house, ReadyCorpus: ready, FreePerSource: f.freePerSource, AllowPrivate: f.allowPrivate,
		FreePerCallerX402: f.freePerCallerX402,
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	// The CAD backfill runs hourly while serving; cleanup stops it before
	// the store closes.
	stopBackfill := startBackfill(ctx, f.ratesURL, st, now, logger)
	// The prune job (docs/operations.md, "Retention") runs at start and
	// hourly; cleanup stops it before the store closes, too.
	stopPrune := server.StartPruner(ctx, st, now, logger)
	return srv, func() { stopPrune(); stopBackfill(); st.Close() }, nil
}

// corpusPasses runs the pinned corpora of the three services through the
// graders.
func corpusPasses() bool {
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe, criteria.ServiceX402Preflight} {
		if !corpus.Passes(svc) {
			return false
		}
	}
	return true
}

// directRail builds the direct rail when its three flags are given, and
// proves the RPC node answers before a priced route is served.
func directRail(ctx context.Context, f serveFlags, network gate.Network) (gate.DirectRail, error) {
	if f.payTo == "" && f.tokenAccount == "" && f.solanaRPC == "" {
		return nil, nil
	}
	if f.facilitator != "" && f.solanaRPC == "" {
		// A facilitator-only deployment: --pay-to and --token-account are
		// the facilitator rail's terms (facilitatorRail checks them).
		return nil, nil
	}
	switch {
	case f.payTo == "", f.tokenAccount == "", f.solanaRPC == "":
		return nil, badFlag{"the direct rail needs all of --pay-to, --token-account and --solana-rpc"}
	case !solana.ValidAddress(f.payTo):
		return nil, badFlag{"--pay-to is not a base58 Solana address"}
	case !solana.ValidAddress(f.tokenAccount):
		return nil, badFlag{"--token-account is not a base58 Solana address"}
	case f.commitment != "confirmed" && f.commitment != "finalized":
		return nil, badFlag{"--commitment must be confirmed or finalized"}
	}
	client, err := solana.New(f.solanaRPC, nil, f.commitment)
	if err != nil {
		return nil, fmt.Errorf("--solana-rpc: %v", err)
	}
	// A lookup of a signature that cannot exist: "not found" proves the node
	// answers JSON-RPC; anything else means the rail does not work.
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := client.GetTransaction(pctx, strings.Repeat("1", 64)); !errors.Is(err, solana.ErrNotFound) {
		return nil, fmt.Errorf("--solana-rpc does not answer getTransaction (%v); the direct rail would not work", err)
	}
	return gate.SolanaRail{Client: client, TokenAccount: f.tokenAccount, Mint: network.Mint}, nil
}

// facilitatorRail reads the facilitator's GET /supported at start, refuses
// one that does not settle exact on our network, puts its fee payer into
// our terms (so every challenge, body and header, carries it) and returns
// the rail. buildServer sets its Memos once the memo key is loaded. With
// --solana-rpc the rail also checks each settled transaction on chain (the
// credit to our token account) and reads its fee; without it the facilitator
// is trusted for the amount.
func facilitatorRail(ctx context.Context, f serveFlags, terms *gate.Terms) (*facilitator.Rail, error) {
	switch {
	case f.payTo == "", f.tokenAccount == "":
		return nil, badFlag{"--facilitator needs --pay-to (the payee) and --token-account (its USDC token account, advertised in every challenge)"}
	case !solana.ValidAddress(f.payTo):
		return nil, badFlag{"--pay-to is not a base58 Solana address"}
	case !solana.ValidAddress(f.tokenAccount):
		return nil, badFlag{"--token-account is not a base58 Solana address"}
	}
	client, err := facilitator.NewClient(f.facilitator, nil)
	if err != nil {
		return nil, fmt.Errorf("--facilitator: %v", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	sup, err := facilitator.Discover(dctx, client, terms.Network)
	if err != nil {
		return nil, fmt.Errorf("--facilitator: GET /supported: %v; the facilitator rail would not work", err)
	}
	terms.FeePayer = sup.FeePayer
	rail := &facilitator.Rail{Client: client, Terms: *terms, Versions: sup.Versions}
	if terms.EVM != nil {
		if rail.EVMVersions, err = facilitator.DiscoverEVM(dctx, client, terms.EVM.Network); err != nil {
			return nil, fmt.Errorf("--facilitator: GET /supported: %v on %s; the EVM entry (--evm-pay-to) would not work", err, terms.EVM.Network.CAIP2)
		}
		if f.evmRPC != "" {
			// The operator's own node, like --solana-rpc: not a target, so
			// not under the target address guard; every call is bounded
			// by chain's timeout and answer cap.
			c, err := chain.New(chain.Options{EVMRPC: f.evmRPC, AllowPrivate: true, UserAgent: buildinfo.UserAgent})
			if err != nil {
				return nil, fmt.Errorf("--evm-rpc: %v", err)
			}
			rail.EVMChain = c
		}
	}
	if f.solanaRPC != "" {
		chain, err := solana.New(f.solanaRPC, nil, f.commitment)
		if err != nil {
			return nil, fmt.Errorf("--solana-rpc: %v", err)
		}
		rail.Chain = chain
	}
	return rail, nil
}

// evmTerms reads --evm-pay-to, --evm-network and --evm-rpc: nil when no
// EVM entry is offered. The entry is settled through the facilitator, so it
// needs --facilitator; the payee is kept in its EIP-55 form.
func evmTerms(f serveFlags) (*gate.EVMTerms, error) {
	n, ok := gate.EVMNetworkByID(cmp.Or(f.evmNetwork, gate.Base.CAIP2))
	switch {
	case !ok:
		return nil, badFlag{"--evm-network must be eip155:8453 (Base) or eip155:84532 (Base Sepolia)"}
	case f.evmPayTo == "" && f.evmRPC != "":
		return nil, badFlag{"--evm-rpc needs --evm-pay-to"}
	case f.evmPayTo == "":
		return nil, nil
	case f.facilitator == "":
		return nil, badFlag{"--evm-pay-to needs --facilitator: USDC on Base is taken through the facilitator rail only"}
	case !lint.EIP55Valid(f.evmPayTo):
		return nil, badFlag{"--evm-pay-to is not an EVM address (0x and 40 hex digits, EIP-55 checksum when mixed-case)"}
	case strings.EqualFold(f.evmPayTo, "0x0000000000000000000000000000000000000000"):
		return nil, badFlag{"--evm-pay-to is the zero address: USDC sent there is lost"}
	}
	if f.evmRPC != "" {
		if u, err := url.Parse(f.evmRPC); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, badFlag{"--evm-rpc must be an absolute http or https URL"}
		}
	}
	return &gate.EVMTerms{Network: n, PayTo: lint.EIP55(f.evmPayTo)}, nil
}

// plainHTTPOffLoopback reports whether raw is an http:// URL whose host is
// not loopback: the payment back ends' answers decide whether a report is
// released, so they must not travel in the clear across a network.
func plainHTTPOffLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}
