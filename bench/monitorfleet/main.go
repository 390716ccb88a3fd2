// Command monitorfleet is the monitor's directory-scale benchmark (not a
// test): a loopback fleet of N x402 endpoints on L listeners (each on its
// own loopback address, so each is a host of its own for the politeness
// limit), imported from a loopback fake Bazaar discovery API (paged) by
// `payability monitor import`, two `payability monitor` processes on one
// PostgreSQL schema, and the figures docs/monitor.md ("Running a
// directory") quotes:
//
//   - every (endpoint, op, slot) due in the measured window run exactly
//     once: none missing, none twice (read from the store and River's jobs,
//     and counted at the fleet);
//
//   - the spread: checks per second at the fleet, p95 against the mean;
//
//   - the largest number of requests one host had in hand at once, against
//     the instances' politeness limits;
//
//   - /status and /api/v1/endpoints?page= latency (p50, p95);
//
//   - each instance's peak RSS and CPU time, and checks per CPU-second.
//
//     go run ./bench/monitorfleet -n 1000 -listeners 100 -every 5m -time-scale 5 -window 40s
//     go run ./bench/monitorfleet -n 100000 -listeners 250 -every 1h -time-scale 6 -window 5m
//
// -time-scale divides the interval (1h at 6 is 10m): the monitor really
// runs at the compressed interval, so the rate is the real one's times the
// scale. Only loopback addresses are contacted. PostgreSQL: -pg, else
// PAYABILITY_TEST_PG, else the local test database; a fresh schema per run.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
)

type options struct {
	n, listeners, instances, workers, hostConns int
	every, hostSpacing, window, warmup          time.Duration
	scale                                       float64
	op, pg, bin                                 string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 1000, "endpoints")
	flag.IntVar(&o.listeners, "listeners", 100, "loopback listeners (hosts), at least 100 for the published run")
	flag.IntVar(&o.instances, "instances", 2, "monitor instances on the one database")
	flag.IntVar(&o.workers, "workers", 16, "--workers of each instance")
	flag.IntVar(&o.hostConns, "host-conns", 2, "--host-conns of each instance")
	flag.DurationVar(&o.hostSpacing, "host-spacing", 10*time.Millisecond, "--host-spacing of each instance")
	flag.DurationVar(&o.every, "every", 5*time.Minute, "the interval of every endpoint, before -time-scale")
	flag.Float64Var(&o.scale, "time-scale", 5, "divide the interval by this (the run is this much faster than real time)")
	flag.DurationVar(&o.window, "window", 40*time.Second, "the measured window")
	flag.DurationVar(&o.warmup, "warmup", 8*time.Second, "time from the start before the window (instances start, the leader is elected)")
	flag.StringVar(&o.op, "op", "lint", "the op every endpoint runs")
	flag.StringVar(&o.pg, "pg", "", "PostgreSQL connection string (default PAYABILITY_TEST_PG, else postgres://postgres@127.0.0.1:5432/test)")
	flag.StringVar(&o.bin, "bin", "", "the payability binary (default: go build ./cmd/payability)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "monitorfleet:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	every := time.Duration(float64(o.every) / o.scale).Round(time.Second)
	if every < monitor.MinEvery {
		return fmt.Errorf("-every / -time-scale is under %v", monitor.MinEvery)
	}
	dir, err := os.MkdirTemp("", "monitorfleet")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(dir, "payability")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/payability").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v: %s", err, out)
		}
	}
	f, err := startFleet(o.listeners)
	if err != nil {
		return err
	}
	defer f.close()
	endpoints := fleetEndpoints(f, o.n, o.op, every)
	dsn, dropSchema, err := freshSchema(o.pg)
	if err != nil {
		return err
	}
	defer dropSchema()
	bazaar, closeBazaar, err := startBazaar(endpoints)
	if err != nil {
		return err
	}
	defer closeBazaar()
	cfg := filepath.Join(dir, "monitor.json")
	if err := seed(bin, cfg, bazaar, dsn, o.op, every, o.n); err != nil {
		return err
	}

	fmt.Printf("== monitorfleet: %d endpoints (%s every %v = %v / %g) on %d loopback hosts; %d instances × %d workers, per host %d conns, spacing %v; %d CPUs, %s\n",
		o.n, o.op, every, o.every, o.scale, o.listeners, o.instances, o.workers, o.hostConns, o.hostSpacing, runtime.NumCPU(), runtime.Version())
	fmt.Printf("   load average at start: %s\n", loadAvg())
	var insts []*instance
	for i := range o.instances {
		in, err := startInstance(bin, cfg, dsn, filepath.Join(dir, fmt.Sprintf("data%d", i)), o)
		if err != nil {
			return err
		}
		defer in.stop()
		insts = append(insts, in)
	}
	start := time.Now()
	from, to := start.Add(o.warmup), start.Add(o.warmup+o.window)
	// Checks due by the window's end run within the drain after it.
	drain := 10*time.Second + min(every/20, 20*time.Second)

	lat := &latencies{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, in := range insts {
		wg.Go(func() { in.sample(ctx) })
	}
	wg.Go(func() { lat.poll(ctx, insts, o.n) })
	time.Sleep(time.Until(from))
	cpu0 := cpuTimes(insts)
	f.measure(from)
	time.Sleep(time.Until(to.Add(drain)))
	cpu1 := cpuTimes(insts)
	cancel()
	wg.Wait()
	perSecond := f.stop(to)
	for _, in := range insts {
		in.stop()
	}
	fmt.Printf("   load average at end: %s\n", loadAvg())

	due := schedule.DueIn(endpoints, from, to)
	index := make(map[string]int, len(endpoints))
	for i, e := range endpoints {
		index[e.ID] = i
	}
	res, err := readStore(dsn, due, index, from, to.Add(drain))
	if err != nil {
		return err
	}
	fmt.Printf("   due in the %v window: %d checks; run once: %d; missing: %d; skipped (a period late): %d; jobs inserted twice: %d; recorded twice: impossible (primary key)\n",
		o.window, len(due), res.once, res.missing, res.skipped, res.dupJobs)
	mean, p95, peak := rateStats(perSecond)
	fmt.Printf("   checks per second at the fleet over the window: mean %.1f, p95 %.0f (%.2f× the mean), max %d; expected mean %.1f\n",
		mean, p95, p95/max(mean, 1e-9), peak, float64(o.n)/every.Seconds())
	fmt.Printf("   requests per check at the fleet: %s; endpoints whose fleet count is not that many per recorded check: %d\n", f.perCheck(res.rowsPerEndpoint), f.twice(res.rowsPerEndpoint))
	fmt.Printf("   most requests one host had in hand at once: %d (limit %d per instance × %d instances)\n", f.maxInFlight.Load(), o.hostConns, o.instances)
	for _, name := range []string{"/status", "/api/v1/endpoints"} {
		p50, p95, n, errs := lat.stats(name)
		fmt.Printf("   %s?page= latency: p50 %v, p95 %v over %d requests (%d failed or timed out at 10s)\n", name, p50, p95, n, errs)
	}
	var cpuSec float64
	for i, in := range insts {
		c := cpu1[i] - cpu0[i]
		cpuSec += c
		fmt.Printf("   instance %d: peak RSS %.1f MB; CPU %.1f s over the window and drain\n", i, float64(in.peakRSS.Load())/1024, c)
	}
	secs := to.Add(drain).Sub(from).Seconds()
	fmt.Printf("   checks per CPU-second of the monitors: %.0f (ran %d checks in %.0f s using %.2f cores; PostgreSQL's CPU not counted)\n",
		float64(res.ranTotal)/max(cpuSec, 1e-9), res.ranTotal, secs, cpuSec/secs)
	if res.missing > 0 || res.dupJobs > 0 {
		return errors.New("a due check was missed or inserted twice")
	}
	return nil
}

// seed imports the fleet through the real import path: `payability
// monitor import` pages through the fake Bazaar discovery API (bazaar, a
// loopback listener of its own) into the store, and the configuration
// names the same catalog as its one source, so each instance's start reads
// it again (one instance per period: a directory's restart) and keeps it
// listed. The file holds no endpoint.
func seed(bin, path, bazaar, dsn, op string, every time.Duration, n int) error {
	type source struct {
		URL        string   `json:"url"`
		Kind       string   `json:"kind"`
		Every      string   `json:"every"`
		Ops        []string `json:"ops"`
		CheckEvery string   `json:"check_every"`
	}
	doc := struct {
		Sources []source `json:"sources"`
	}{Sources: []source{{URL: bazaar, Kind: "bazaar", Every: "30d", Ops: []string{op}, CheckEvery: every.String()}}}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	start := time.Now()
	out, err := exec.Command(bin, "monitor", "import", "--from", bazaar, "--kind", "bazaar", "--ops", op, "--every", every.String(),
		"--store", dsn, "--allow-private").CombinedOutput()
	if err != nil {
		return fmt.Errorf("monitor import: %v: %s", err, out)
	}
	if want := fmt.Sprintf("imported %d endpoints", n); !strings.Contains(string(out), want) {
		return fmt.Errorf("monitor import: want %q: %s", want, out)
	}
	fmt.Printf("   seeded through the fake Bazaar: %d endpoints imported in %.1f s (payability monitor import)\n", n, time.Since(start).Seconds())
	return nil
}

// startBazaar serves the fleet as a facilitator's Bazaar discovery list,
// GET /discovery/resources?type=http&limit=&offset=, page by page, on its
// own loopback listener.
func startBazaar(endpoints []monitor.Endpoint) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	type item struct {
		Resource string `json:"resource"`
		Type     string `json:"type"`
		Method   string `json:"method"`
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/discovery/resources" {
			http.NotFound(w, r)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		limit = min(max(limit, 1), 1000)
		offset = min(max(offset, 0), len(endpoints))
		page := struct {
			Items      []item         `json:"items"`
			Pagination map[string]int `json:"pagination"`
		}{Items: []item{}, Pagination: map[string]int{"limit": limit, "offset": offset, "total": len(endpoints)}}
		for _, e := range endpoints[offset:min(offset+limit, len(endpoints))] {
			page.Items = append(page.Items, item{Resource: e.URL, Type: "http", Method: e.Method})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/discovery/resources", func() { srv.Close() }, nil
}

func fleetEndpoints(f *fleet, n int, op string, every time.Duration) []monitor.Endpoint {
	out := make([]monitor.Endpoint, n)
	for i := range out {
		// The id the import derives from the method and URL.
		u, _ := monitor.CanonicalURL(fmt.Sprintf("http://%s/r/%d", f.addrs[i%len(f.addrs)], i))
		out[i] = monitor.Endpoint{ID: monitor.CatalogEntry{URL: u, Method: "GET"}.ID(), URL: u, Method: "GET", Ops: []string{op}, Every: every}
	}
	return out
}

// fleet is the loopback x402 endpoints: one 402 challenge per path,
// counting requests per endpoint and per second, and in flight per host.
type fleet struct {
	addrs       []string
	servers     []*http.Server
	mu          sync.Mutex
	hits        map[int]int // endpoint index → requests
	inFlight    map[string]int
	maxInFlight atomic.Int64
	from        time.Time
	perSecond   map[int64]int
	measuring   bool
}

func startFleet(n int) (*fleet, error) {
	f := &fleet{hits: map[int]int{}, inFlight: map[string]int{}, perSecond: map[int64]int{}}
	for i := range n {
		ip := fmt.Sprintf("127.0.%d.%d", 1+i/250, 2+i%250)
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			f.close()
			return nil, err
		}
		addr := ln.Addr().String()
		srv := &http.Server{Handler: f.handler(ip, "http://"+addr), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		f.addrs = append(f.addrs, addr)
		f.servers = append(f.servers, srv)
	}
	return f, nil
}

var pathRe = regexp.MustCompile(`^/r/(\d+)$`)

func (f *fleet) handler(host, base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := pathRe.FindStringSubmatch(r.URL.Path)
		if m == nil {
			http.NotFound(w, r)
			return
		}
		idx, _ := strconv.Atoi(m[1])
		f.mu.Lock()
		f.inFlight[host]++
		if n := int64(f.inFlight[host]); n > f.maxInFlight.Load() {
			f.maxInFlight.Store(n)
		}
		f.hits[idx]++
		if f.measuring {
			f.perSecond[int64(time.Since(f.from)/time.Second)]++
		}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.inFlight[host]--
			f.mu.Unlock()
		}()
		resource := base + r.URL.Path
		body := fmt.Sprintf(`{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"10000","resource":%q,"description":"bench","mimeType":"application/json","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","maxTimeoutSeconds":300,"asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","extra":{"feePayer":"5a2xontTE9Zr3upmeB6VuDAQVx7sR1DEbscMUCwSWdwZ"}}]}`, resource)
		hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"10000","asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","maxTimeoutSeconds":300,"extra":{"feePayer":"5a2xontTE9Zr3upmeB6VuDAQVx7sR1DEbscMUCwSWdwZ"}}]}`, resource)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(hdr)))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, body)
	})
}

func (f *fleet) measure(from time.Time) {
	f.mu.Lock()
	f.from, f.measuring = from, true
	f.mu.Unlock()
}

// stop ends the per-second count and returns the counts of the seconds in
// [from, to).
func (f *fleet) stop(to time.Time) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.measuring = false
	n := int(to.Sub(f.from) / time.Second)
	out := make([]int, n)
	for s, c := range f.perSecond {
		if s >= 0 && int(s) < n {
			out[s] = c
		}
	}
	return out
}

// perCheck is the number of requests one check makes (the most common
// ratio of the fleet's count to the recorded checks).
func (f *fleet) requestsPerCheck(rows map[int]int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	count := map[int]int{}
	for idx, r := range rows {
		if r > 0 && f.hits[idx]%r == 0 {
			count[f.hits[idx]/r]++
		}
	}
	best, k := 0, 0
	for ratio, c := range count {
		if c > best {
			best, k = c, ratio
		}
	}
	return k
}

func (f *fleet) perCheck(rows map[int]int) string {
	return strconv.Itoa(f.requestsPerCheck(rows))
}

// twice counts the endpoints the fleet saw more (or fewer) requests from
// than their recorded checks make: a check run twice, or a run not
// recorded.
func (f *fleet) twice(rows map[int]int) int {
	k := f.requestsPerCheck(rows)
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for idx, h := range f.hits {
		if h != k*rows[idx] {
			n++
		}
	}
	return n
}

func (f *fleet) close() {
	for _, s := range f.servers {
		s.Close()
	}
}

type storeResult struct {
	once, missing, skipped, dupJobs, ranTotal int
	rowsPerEndpoint                           map[int]int
}

// readStore compares the due checks with the history and River's jobs.
func readStore(dsn string, due []schedule.Due, index map[string]int, from, end time.Time) (storeResult, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return storeResult{}, err
	}
	defer conn.Close(ctx)
	type key struct {
		id, op string
		slot   int64
	}
	recorded := map[key]bool{}
	res := storeResult{rowsPerEndpoint: map[int]int{}}
	rows, err := conn.Query(ctx, `SELECT endpoint, op, slot, at_ms FROM observations`)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var (
			k  key
			at int64
		)
		if err := rows.Scan(&k.id, &k.op, &k.slot, &at); err != nil {
			return res, err
		}
		recorded[k] = true
		res.rowsPerEndpoint[index[k.id]]++
		if t := time.UnixMilli(at); !t.Before(from) && !t.After(end) {
			res.ranTotal++
		}
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	skipped := map[key]bool{}
	rows, err = conn.Query(ctx, `SELECT args->>'endpoint', args->>'op', (args->>'slot')::bigint, state::text, count(*) OVER (PARTITION BY args->>'endpoint', args->>'op', args->>'slot')
		FROM river_job WHERE kind = 'payability_monitor_check'`)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var (
			k     key
			state string
			n     int
		)
		if err := rows.Scan(&k.id, &k.op, &k.slot, &state, &n); err != nil {
			return res, err
		}
		if n > 1 {
			res.dupJobs++
		}
		if state == "cancelled" {
			skipped[k] = true
		}
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	for _, d := range due {
		k := key{d.Args.Endpoint, d.Args.Op, d.Args.Slot}
		switch {
		case recorded[k]:
			res.once++
		case skipped[k]:
			res.skipped++
		default:
			res.missing++
		}
	}
	return res, nil
}

func rateStats(perSecond []int) (mean, p95 float64, peak int) {
	if len(perSecond) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(perSecond)
	slices.Sort(s)
	sum := 0
	for _, c := range s {
		sum += c
	}
	return float64(sum) / float64(len(s)), float64(s[min(len(s)-1, len(s)*95/100)]), s[len(s)-1]
}

// freshSchema creates a schema of its own for this run and returns a DSN
// selecting it.
func freshSchema(dsn string) (string, func(), error) {
	if dsn == "" {
		dsn = os.Getenv("PAYABILITY_TEST_PG")
	}
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	schema := fmt.Sprintf("monitorfleet_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	drop := func() {
		conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(ctx)
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			drop()
			return "", nil, errors.New("postgres: invalid URL")
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), drop, nil
	}
	return dsn + " search_path=" + schema, drop, nil
}

// instance is one monitor process.
type instance struct {
	cmd     *exec.Cmd
	base    string
	peakRSS atomic.Int64 // KiB
	once    sync.Once
	done    chan struct{}
}

var servingRe = regexp.MustCompile(`serving on (http://\S+)`)

func startInstance(bin, cfg, dsn, dataDir string, o options) (*instance, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "monitor", "--config", cfg, "--store", dsn, "--data-dir", dataDir, "--addr", "127.0.0.1:0", "--allow-private",
		"--workers", strconv.Itoa(o.workers), "--host-conns", strconv.Itoa(o.hostConns), "--host-spacing", o.hostSpacing.String())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	in := &instance{cmd: cmd, done: make(chan struct{})}
	served := make(chan string, 1)
	go func() {
		defer close(in.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := servingRe.FindStringSubmatch(line); m != nil {
				served <- m[1]
			}
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.HasPrefix(line, "payability") {
				fmt.Fprintln(os.Stderr, "   [instance]", line)
			}
		}
	}()
	select {
	case in.base = <-served:
		return in, nil
	case <-in.done:
		return nil, errors.New("a monitor instance exited before serving")
	case <-time.After(5 * time.Minute):
		in.stop()
		return nil, errors.New("a monitor instance did not serve within 5 minutes")
	}
}

// stop asks the instance to end (SIGTERM) and waits.
func (in *instance) stop() {
	in.once.Do(func() {
		in.cmd.Process.Signal(syscall.SIGTERM)
		<-in.done
		in.cmd.Wait()
	})
}

// sample keeps the instance's peak RSS (VmHWM).
func (in *instance) sample(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if kb := procStatus(in.cmd.Process.Pid, "VmHWM:"); kb > in.peakRSS.Load() {
			in.peakRSS.Store(kb)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// cpuTimes are the instances' user+system CPU seconds so far.
func cpuTimes(insts []*instance) []float64 {
	out := make([]float64, len(insts))
	for i, in := range insts {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", in.cmd.Process.Pid))
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		ut, _ := strconv.ParseFloat(fields[11], 64)
		st, _ := strconv.ParseFloat(fields[12], 64)
		out[i] = (ut + st) / 100 // USER_HZ
	}
	return out
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// latencies polls the read surfaces during the run.
type latencies struct {
	mu   sync.Mutex
	d    map[string][]time.Duration
	errs map[string]int
}

func (l *latencies) poll(ctx context.Context, insts []*instance, n int) {
	l.d, l.errs = map[string][]time.Duration{}, map[string]int{}
	client := &http.Client{Timeout: 10 * time.Second}
	pages := max(1, n/100)
	for i := 0; ctx.Err() == nil; i++ {
		in := insts[i%len(insts)]
		name := []string{"/status", "/api/v1/endpoints"}[i%2]
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s%s?page=%d", in.base, name, 1+(i/2)%pages), nil)
		res, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if err == nil && res.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", res.StatusCode)
			}
		}
		d := time.Since(start)
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if err != nil {
			l.errs[name]++
		} else {
			l.d[name] = append(l.d[name], d)
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (l *latencies) stats(name string) (p50, p95 time.Duration, n, errs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := slices.Clone(l.d[name])
	slices.Sort(d)
	if len(d) == 0 {
		return 0, 0, 0, l.errs[name]
	}
	return d[len(d)/2].Round(time.Millisecond), d[min(len(d)-1, len(d)*95/100)].Round(time.Millisecond), len(d), l.errs[name]
}
