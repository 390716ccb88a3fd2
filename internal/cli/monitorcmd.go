//go:build !quick

package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/health"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/server"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

func init() {
	register(command{"monitor", summaryOf("monitor"), runMonitor})
}

const monitorUsage = "monitor --config FILE [--store sqlite:PATH|postgres://…] [--data-dir DIR] [--addr ADDR] [--public-url URL] [--allow-private] [--key-dir DIR] [--ops-token-env NAME] [--workers N] [--host-conns N] [--host-spacing DURATION]\n       payability monitor import --from URL [--from URL …] [--ops OPS] [--every DURATION] [--dry-run] [--store …] [--data-dir DIR] [--allow-private]\n       payability monitor report …"

const monitorNote = `Runs every configured endpoint's ops on their schedule (River jobs in the store's database;
several instances on one PostgreSQL run each check once) and serves what it observed: the JSON API
(/api/v1/endpoints…), the status page (/status), badges (/badge/{id}.svg|.json), signed webhooks,
/metrics and /probe, and signed reliability records (/api/v1/reliability/{id}). docs/monitor.md.
exit status: 0 shut down gracefully; 1 could not start or serve; 2 bad usage or a bad configuration.`

type monitorFlags struct {
	config, storeDSN, dataDir, addr, publicURL, keyDir string
	opsTokenEnv                                        string
	allowPrivate                                       bool
	load                                               monitorLoad
}

// monitorLoad is how much one monitor instance asks of the machine and of
// the targets: its workers, and its politeness per target host.
type monitorLoad struct {
	workers     int           // checks at once (0: River's queue default of the store, 10 PostgreSQL, 4 SQLite)
	hostConns   int           // connections open at once to one host
	hostSpacing time.Duration // least time between two connections opened to one host
}

// Politeness defaults of a monitor instance (docs/monitor.md, "Running a
// directory").
const (
	DefaultMonitorHostConns   = 2
	DefaultMonitorHostSpacing = 100 * time.Millisecond
)

// defaultMonitorLoad is serve --monitor's, which has no flags for it.
var defaultMonitorLoad = monitorLoad{hostConns: DefaultMonitorHostConns, hostSpacing: DefaultMonitorHostSpacing}

func runMonitor(ctx context.Context, e Env, args []string) int {
	if len(args) > 0 && args[0] == "import" {
		return runMonitorImport(ctx, e, args[1:])
	}
	if len(args) > 0 && args[0] == "report" {
		return runMonitorReport(ctx, e, args[1:])
	}
	fs := newFlagSet(e, "monitor", monitorUsage, monitorNote, storeNote)
	var f monitorFlags
	fs.StringVar(&f.config, "config", "", "the monitor configuration `FILE` (JSON; docs/monitor.md)")
	registerStoreFlags(fs.FlagSet, &f.storeDSN, &f.dataDir)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8403", "the listen address `HOST:PORT`")
	fs.StringVar(&f.publicURL, "public-url", "", "the base `URL` the public reaches this monitor at (links in the page and badges)")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "allow endpoints on loopback and private addresses (private deployments, tests)")
	fs.StringVar(&f.opsTokenEnv, "ops-token-env", "", "the environment variable `NAME` holding the bearer token that changes the endpoint set through the API (POST/PATCH/DELETE /api/v1/endpoints); without it the API is read-only")
	fs.StringVar(&f.keyDir, "key-dir", "", "the key `DIR`: signing-key.pem signs reliability records (created on first start), retired/*.pem stay in the JWKS (default <data-dir>)")
	fs.IntVar(&f.load.workers, "workers", 0, "checks this instance runs at once, `N` in [1, 1000] (default 10 on PostgreSQL, 4 on SQLite)")
	fs.IntVar(&f.load.hostConns, "host-conns", DefaultMonitorHostConns, "politeness: connections open at once to one target host, `N` in [1, 64], over every worker of this instance")
	fs.DurationVar(&f.load.hostSpacing, "host-spacing", DefaultMonitorHostSpacing, "politeness: least time between two connections opened to one target host (`DURATION`, 0 for none, at most 1m)")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "takes no arguments besides its flags")
	}
	if err := applyEnv(fs.FlagSet, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		return exitUsage
	}
	if f.config == "" {
		return usageError(e, fs, "--config is required")
	}
	if msg := f.load.check(); msg != "" {
		return usageError(e, fs, "%s", msg)
	}
	token, err := opsToken(e, f.opsTokenEnv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		return exitUsage
	}
	cfg, err := loadMonitorConfig(f.config)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		return exitUsage
	}
	if _, ok := storeBackend(f.storeDSN, f.dataDir); !ok {
		fmt.Fprintln(e.Stderr, "payability monitor: --store must be sqlite:PATH or postgres://…")
		return exitUsage
	}
	receivers, err := monitorReceivers(e, cfg)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		return exitUsage
	}
	// The listener opens before the store and keys, so a bad --addr creates nothing.
	ln, err := listen(f.addr)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		if errors.As(err, new(badFlag)) {
			return exitUsage
		}
		return ExitInternal
	}
	defer ln.Close()
	st, err := openStore(ctx, f.storeDSN, f.dataDir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		return ExitInternal
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(e.Stderr, nil))
	keyDir := f.keyDir
	if keyDir == "" {
		keyDir = f.dataDir
	}
	key, keys, err := loadKeys(keyDir, "")
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		return ExitInternal
	}
	live, err := startLiveMonitor(f.config, cfg, receivers, func(cfg *monitor.Config, receivers []schedule.Receiver) (*monitorRun, error) {
		return startMonitor(ctx, e, cfg, st, f.storeDSN, f.dataDir, f.allowPrivate, f.load, f.publicURL, "/metrics", logger, key, keys, receivers, token)
	}, e)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability monitor: %v\n", err)
		if errors.As(err, new(badFlag)) {
			return exitUsage
		}
		return ExitInternal
	}
	defer live.stop()
	backend, _ := storeBackend(f.storeDSN, f.dataDir)
	fmt.Fprintf(e.Stderr, "payability monitor: %d endpoints in the file, %d sources; store: %s\n", len(cfg.Endpoints), len(cfg.Sources), backend)
	probe := health.New(server.StoreCheck(st))
	return serveUntilDone(ctx, e, ln, live, daemon{name: "monitor", probe: probe, reload: live.reload})
}

func loadMonitorConfig(path string) (*monitor.Config, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: cannot open %s", filepath.Base(path))
	}
	defer fh.Close()
	if strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
		return nil, errors.New("config: the configuration is JSON (docs/monitor.md); YAML is not read")
	}
	return monitor.ReadConfig(fh)
}

// monitorRun is a started monitor: its handler, and stop, which waits for
// the checks in flight.
type monitorRun struct {
	handler http.Handler
	stop    func()
}

// liveMonitor is the running monitor of a configuration file, which SIGHUP
// reloads: the new file is read and checked first (a refused one keeps the
// running monitor); then a monitor on it is started, takes the requests,
// and the old one stops, finishing its checks in flight.
type liveMonitor struct {
	path  string
	env   Env
	start func(*monitor.Config, []schedule.Receiver) (*monitorRun, error)

	mu  sync.Mutex // one reload at a time
	run atomic.Pointer[monitorRun]
}

func startLiveMonitor(path string, cfg *monitor.Config, receivers []schedule.Receiver, start func(*monitor.Config, []schedule.Receiver) (*monitorRun, error), e Env) (*liveMonitor, error) {
	run, err := start(cfg, receivers)
	if err != nil {
		return nil, err
	}
	l := &liveMonitor{path: path, env: e, start: start}
	l.run.Store(run)
	return l, nil
}

func (l *liveMonitor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.run.Load().handler.ServeHTTP(w, r)
}

// reload reads the file again; an error leaves the running monitor as it is.
func (l *liveMonitor) reload() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cfg, err := loadMonitorConfig(l.path)
	if err != nil {
		return err
	}
	receivers, err := monitorReceivers(l.env, cfg)
	if err != nil {
		return err
	}
	next, err := l.start(cfg, receivers)
	if err != nil {
		return err
	}
	l.run.Swap(next).stop()
	return nil
}

func (l *liveMonitor) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.run.Load().stop()
}

// startMonitor wires the monitor on an open store (which must keep the
// history) and starts its scheduler in the same database.
// monitorReceivers checks what a configuration needs of this process — every
// op it names is built in, every webhook secret is set — before anything is
// created, and returns the webhook receivers.
func monitorReceivers(e Env, cfg *monitor.Config) ([]schedule.Receiver, error) {
	built := monitor.OpsObservers(ops.Runner{})
	for _, ep := range cfg.Endpoints {
		for _, op := range ep.Ops {
			if _, ok := built[op]; !ok {
				return nil, badFlag{fmt.Sprintf("config: endpoint %s: op %s is not available in this build", ep.ID, op)}
			}
		}
	}
	for i, src := range cfg.Sources {
		for _, op := range src.Ops {
			if _, ok := built[op]; !ok {
				return nil, badFlag{fmt.Sprintf("config: sources[%d]: op %s is not available in this build", i, op)}
			}
		}
	}
	var receivers []schedule.Receiver
	for i, w := range cfg.Webhooks {
		secret := e.Getenv(w.SecretEnv)
		if secret == "" {
			return nil, badFlag{fmt.Sprintf("config: webhooks[%d].secret_env: %s is not set", i, w.SecretEnv)}
		}
		receivers = append(receivers, schedule.Receiver{ID: w.ID, URL: w.URL, Secret: []byte(secret), Format: w.Format})
	}
	return receivers, nil
}

// check returns what is wrong with the flags, "" when nothing.
func (l monitorLoad) check() string {
	switch {
	case l.workers < 0 || l.workers > 1000:
		return "--workers must be in [1, 1000]"
	case l.hostConns < 1 || l.hostConns > 64:
		return "--host-conns must be in [1, 64]"
	case l.hostSpacing < 0 || l.hostSpacing > time.Minute:
		return "--host-spacing must be in [0, 1m]"
	}
	return ""
}

func startMonitor(ctx context.Context, e Env, cfg *monitor.Config, st store.Store, dsn, dataDir string, allowPrivate bool, load monitorLoad, publicURL, metricsPath string, logger *slog.Logger, key report.Key, keys report.KeySet, receivers []schedule.Receiver, token []byte) (*monitorRun, error) {
	hist, ok := st.(store.History)
	cat, ok2 := st.(store.EndpointCatalog)
	if !ok || !ok2 {
		return nil, errors.New("the store keeps no history")
	}
	// One polite limit per instance: every worker's checks share it.
	runner := ops.Runner{Fetcher: e.fetcherWith(allowPrivate, target.NewPoliteHostLimit(load.hostConns, load.hostSpacing)), Now: e.now()}
	m := &monitor.Monitor{Config: cfg, History: hist, Catalog: cat, AllowPrivate: allowPrivate, Observers: monitor.OpsObservers(runner), Now: e.now(), Log: logger}
	// The file seeds the stored set (a reload reseeds it: see monitor.Seed).
	if err := m.Seed(ctx); err != nil {
		if errors.Is(err, store.ErrTooManyEndpoints) {
			return nil, badFlag{fmt.Sprintf("config: the store would hold more than %d endpoints", store.MaxEndpoints)}
		}
		return nil, err
	}
	imp := &monitor.Importer{Monitor: m, Fetch: e.catalogFetcher(allowPrivate), AllowPrivate: allowPrivate}
	reg := prometheus.NewRegistry()
	if metricsPath == "/metrics" { // standalone: the process's own metrics too
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	metrics := monitorhttp.NewMetrics(reg, m)
	m.Recorded = metrics.Recorded
	// River's own lines only from warnings up: the check lines are ours.
	riverLog := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sched, err := schedule.Open(ctx, schedule.Options{DB: scheduleDB(dsn, dataDir), Monitor: m, Logger: riverLog, Workers: load.workers,
		Receivers: receivers, Post: e.poster(allowPrivate), Now: e.now(), DeliveryResult: metrics.Delivery,
		Skipped: metrics.Skipped, Lag: metrics.Lag,
		Import: func(ctx context.Context, src monitor.Source) error {
			_, err := imp.Import(ctx, src)
			return err
		}})
	if err != nil {
		return nil, err
	}
	if err := sched.Start(ctx); err != nil {
		sched.Close()
		return nil, err
	}
	h := monitorhttp.New(monitorhttp.Config{Monitor: m, PublicURL: publicURL, Registry: reg, MetricsPath: metricsPath,
		Key: &key, KeySet: &keys, ServeJWKS: metricsPath == "/metrics", OpsToken: token, Changed: sched.Poke})
	return &monitorRun{handler: h, stop: func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), schedule.JobTimeout)
		defer cancel()
		if err := sched.Stop(sctx); err != nil {
			logger.Warn("monitor stop", "error", err.Error())
		}
	}}, nil
}

// scheduleDB names the store's database for the scheduler, as openStore
// would open it.
func scheduleDB(dsn, dataDir string) schedule.Database {
	switch {
	case dsn == "":
		return schedule.Database{SQLitePath: dataDir + "/payability.db"}
	case strings.HasPrefix(dsn, "sqlite:"):
		return schedule.Database{SQLitePath: strings.TrimPrefix(dsn, "sqlite:")}
	}
	return schedule.Database{PostgresDSN: dsn}
}

// monitorMetricsPath is where serve --monitor serves the monitor's metrics
// (serve's own are at /metrics).
const monitorMetricsPath = "/metrics/monitor"

// serveWithMonitor starts the monitor of `serve --monitor FILE` on serve's
// store (a handle of its own on the same database) and returns one handler
// for both: the monitor's routes, then serve's, and the monitor's reload
// (SIGHUP). A nil handler means serve must exit with code.
func serveWithMonitor(ctx context.Context, e Env, f serveFlags, srv http.Handler) (http.Handler, func() error, func(), int) {
	cfg, err := loadMonitorConfig(f.monitor)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability serve: --monitor: %v\n", err)
		return nil, nil, nil, exitUsage
	}
	receivers, err := monitorReceivers(e, cfg)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability serve: --monitor: %v\n", err)
		return nil, nil, nil, exitUsage
	}
	st, err := openStore(ctx, f.storeDSN, f.dataDir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability serve: --monitor: %v\n", err)
		return nil, nil, nil, ExitInternal
	}
	logger := slog.New(slog.NewTextHandler(e.Stderr, nil))
	// serve's own key signs the records, so serve's JWKS verifies them.
	key, keys, err := loadKeys(f.dataDir, f.signingKey)
	if err != nil {
		st.Close()
		fmt.Fprintf(e.Stderr, "payability serve: --monitor: %v\n", err)
		return nil, nil, nil, ExitInternal
	}
	live, err := startLiveMonitor(f.monitor, cfg, receivers, func(cfg *monitor.Config, receivers []schedule.Receiver) (*monitorRun, error) {
		return startMonitor(ctx, e, cfg, st, f.storeDSN, f.dataDir, f.allowPrivate, defaultMonitorLoad, f.publicURL, monitorMetricsPath, logger, key, keys, receivers, nil)
	}, e)
	if err != nil {
		st.Close()
		fmt.Fprintf(e.Stderr, "payability serve: --monitor: %v\n", err)
		if errors.As(err, new(badFlag)) {
			return nil, nil, nil, exitUsage
		}
		return nil, nil, nil, ExitInternal
	}
	mux := http.NewServeMux()
	for _, p := range append(monitorhttp.Routes, monitorMetricsPath) {
		mux.Handle(p, live)
	}
	mux.Handle("/", srv)
	return mux, live.reload, func() { live.stop(); st.Close() }, ExitOK
}

// poster is the webhook deliveries' client: the guarded target client (no
// redirects, bounded), so a receiver URL cannot reach a private address
// unless allowed.
func (e Env) poster(allowPrivate bool) schedule.Poster {
	return target.New(target.Options{AllowPrivate: allowPrivate, UserAgent: buildinfo.UserAgent, Timeout: 10 * time.Second})
}

// loadKeys loads (creating it on first start) the signing key of dir, or
// the key file when given, and the key set dir publishes.
func loadKeys(dir, file string) (report.Key, report.KeySet, error) {
	var (
		key report.Key
		err error
	)
	if file != "" {
		key, err = report.LoadKeyFile(file)
	} else {
		key, _, err = report.LoadOrCreateKey(dir, rand.Reader)
	}
	if err != nil {
		return report.Key{}, report.KeySet{}, err
	}
	keys, err := report.LoadKeySet(dir, key)
	return key, keys, err
}
