// Command bench is payability's load harness. It starts loopback x402
// targets (a plain fixed 402 challenge, optional added latency) in a child
// process and measures, in the same run, the raw limit (plain GETs with a
// minimal Go HTTP client at the same concurrency) against `scan --op check`
// and `scan --op probe`, then prints each rate, the ratios and the peak RSS.
//
//	go run ./bench                         # every scenario, each in its own process
//	go run ./bench -scenario ratio         # (a), (a'), (b), (c) at -c 64, zero latency
//	go run ./bench -scenario samehost      # one host: scan check|memo|probe vs raw keep-alive GETs
//	go run ./bench -scenario latency       # 10,000 URLs at -c 256 against a 50 ms target
//	go run ./bench -scenario rtt [-rtt 40ms] [-http1]   # TLS targets behind a latency relay
//	go run ./bench -scenario memory -n 100000
//	go run ./bench -scenario ratio -cpuprofile check.pprof   # profile phase (b)
//
// Only loopback addresses are ever contacted (127.0.0.2, 127.0.0.3, …: each
// a distinct host for the per-host limit, so that limit does not cap the run).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"time"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/scan"
)

func main() {
	serve := flag.Bool("serve", false, "internal: run the loopback targets (the child process)")
	scenario := flag.String("scenario", "all", "ratio, samehost, latency, rtt, memory or all (each scenario in its own process)")
	n := flag.Int("n", 0, "URLs per phase (default: ratio 20000, latency 10000, memory 100000)")
	c := flag.Int("c", 0, "concurrency (default: 64; latency 256)")
	perHost := flag.Int("per-host", 4, "per-host limit of the scanner")
	hosts := flag.Int("hosts", 0, "loopback target hosts (default: 2 × concurrency / per-host)")
	latency := flag.Duration("latency", -1, "latency added by the targets (default: 0; latency scenario 50ms)")
	idle := flag.Duration("wait-idle", 0, "before each round or scenario, wait up to this long for the machine to be idle (a shared machine)")
	rounds := flag.Int("rounds", 3, "ratio scenario: rounds of the four phases (medians are reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of phase (b), scan --op check, to `FILE`")
	rtt := flag.Duration("rtt", 40*time.Millisecond, "rtt scenario: the round trip the loopback relay simulates (half of it each way)")
	http1 := flag.Bool("http1", false, "rtt scenario: the TLS targets offer HTTP/1.1 only (no h2)")
	tlsDir := flag.String("tls-dir", "", "internal: the child's certificate and key (rtt scenario)")
	flag.Parse()

	if *serve {
		debug.SetGCPercent(scan.GCPercent) // the targets are cheap Go servers too
		if err := serveTargets(*hosts, max(*latency, 0), *tlsDir, *rtt, *http1); err != nil {
			fmt.Fprintln(os.Stderr, "bench targets:", err)
			os.Exit(1)
		}
		return
	}
	// Run as the scan command does (an explicit GOGC wins), and the raw
	// client with it: every phase in one process under one setting.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(scan.GCPercent)
	}
	var err error
	switch *scenario {
	case "all":
		err = runAll(*idle)
	case "ratio":
		err = ratio(or(*n, 20000), or(*c, 64), *perHost, *hosts, *rounds, orD(*latency, 0), *cpuprofile, *idle)
	case "latency":
		idleOrWarn(*idle)
		err = latencyScenario(or(*n, 10000), or(*c, 256), *perHost, *hosts, orD(*latency, 50*time.Millisecond))
	case "samehost":
		err = sameHost(or(*n, 20000), *perHost, *rounds, *cpuprofile, *idle)
	case "rtt":
		idleOrWarn(*idle)
		err = rttScenario(or(*n, 20), *rtt, *http1)
	case "memory":
		idleOrWarn(*idle)
		err = memory(or(*n, 100000), or(*c, 64), *perHost, *hosts, orD(*latency, 0))
	default:
		err = fmt.Errorf("unknown scenario %q", *scenario)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func idleOrWarn(limit time.Duration) {
	if !waitIdle(limit) {
		fmt.Printf("   (the machine was not idle after %s; going on: see the cpu columns)\n", limit)
	}
}

func or(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orD(v, def time.Duration) time.Duration {
	if v >= 0 {
		return v
	}
	return def
}

// runAll runs each scenario in a fresh process, so each peak RSS is its own.
func runAll(idle time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"-scenario", "ratio"},
		{"-scenario", "samehost"},
		{"-scenario", "latency"},
		{"-scenario", "rtt"},
		{"-scenario", "rtt", "-http1"},
		{"-scenario", "memory", "-n", "10000"},
		{"-scenario", "memory", "-n", "100000"},
	} {
		cmd := exec.Command(exe, append(args, "-wait-idle", idle.String())...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%v: %w", args, err)
		}
		fmt.Println()
	}
	return nil
}

func header(title string, n, c, perHost int, t *targets, latency time.Duration) {
	fmt.Printf("== %s\n", title)
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	fmt.Printf("   %d CPUs, GOMAXPROCS %d, GOGC %d, %s; %d URLs, concurrency %d, per-host %d; %d loopback targets %s … %s, added latency %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), gc, runtime.Version(), n, c, perHost, len(t.addrs), t.addrs[0], t.addrs[len(t.addrs)-1], latency)
}

func defaultHosts(hosts, c, perHost int) int {
	if hosts > 0 {
		return hosts
	}
	return max(1, 2*((c+perHost-1)/perHost))
}

func printPhase(p phase) {
	fmt.Printf("   %-28s %6d URLs %6d req %6.2fs %7.0f URLs/s %7.0f req/s %5.0f µs CPU/URL  RSS %5.1f MB  %s", p.name, p.urls, p.requests, p.wall.Seconds(), p.rate(), p.reqRate(), p.cost(), float64(p.peakRSS)/1024, p.cpu)
	if p.note != "" {
		fmt.Printf("  [%s]", p.note)
	}
	if p.ok != p.urls {
		fmt.Printf("  (only %d of %d answered)", p.ok, p.urls)
	}
	fmt.Println()
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratio is the many-hosts scenario: (a) the raw GET rate (with and
// without keep-alive), (b) scan --op
// check and (c) scan --op probe, at the same concurrency, in one run. The
// four phases run back to back in each of several rounds, so a ratio is
// taken between neighbours; the medians over the rounds are the result.
func ratio(n, c, perHost, hosts, rounds int, latency time.Duration, cpuprofile string, idle time.Duration) error {
	t, err := startTargets(defaultHosts(hosts, c, perHost), latency)
	if err != nil {
		return err
	}
	defer t.stop()
	header("ratio: raw GET vs scan --op check vs scan --op probe", n, c, perHost, t, latency)
	fmt.Printf("   %d rounds of (a), (a'), (b), (c); (c) scans n/7 URLs so it sends as many requests as the others\n", rounds)

	rawGET(t, min(n, 2000), c, false) // warm-up: first connections, page faults
	var rb0, costA2, costB, costC []float64
	var ra, ra2, rb, rc, bOverA, bOverA2, cOverA, cOverA2 []float64
	for r := 1; r <= rounds; r++ {
		idleOrWarn(idle)
		fmt.Printf("   round %d\n", r)
		a := rawGET(t, n, c, true)
		printPhase(a)
		a2 := rawGET(t, n, c, false)
		printPhase(a2)
		prof := ""
		if r == 1 {
			prof = cpuprofile
		}
		b, err := scanPhase(t, ops.OpCheck, n, c, perHost, prof)
		if err != nil {
			return err
		}
		printPhase(b)
		b0 := bareOps(t, n, c, perHost)
		printPhase(b0)
		cp, err := scanPhase(t, ops.OpProbe, max(1, n/7), c, perHost, "")
		if err != nil {
			return err
		}
		printPhase(cp)
		ra, ra2, rb, rc = append(ra, a.rate()), append(ra2, a2.rate()), append(rb, b.rate()), append(rc, cp.rate())
		rb0 = append(rb0, b0.rate())
		costA2, costB, costC = append(costA2, a2.cost()), append(costB, b.cost()), append(costC, cp.cost())
		bOverA, bOverA2 = append(bOverA, b.rate()/a.rate()), append(bOverA2, b.rate()/a2.rate())
		cOverA, cOverA2 = append(cOverA, cp.rate()/(a.rate()/7)), append(cOverA2, cp.rate()/(a2.rate()/7))
	}
	fmt.Printf("   medians over %d rounds: (a) %.0f GET/s, (a') %.0f GET/s, (b) %.0f URLs/s, (c) %.0f URLs/s (%.0f req/s)\n",
		rounds, median(ra), median(ra2), median(rb), median(rc), 7*median(rc))
	fmt.Printf("   (b)/(b0)     = %.2f   the scanner's own cost: check in the scanner vs bare ops.Check at the same concurrency\n", median(rb)/median(rb0))
	fmt.Printf("   (b)/(a)      = %.2f   check vs raw keep-alive GETs\n", median(bOverA))
	fmt.Printf("   (b)/(a')     = %.2f   check vs raw GETs without keep-alive (issue 12 target >= 0.85 over many hosts)\n", median(bOverA2))
	fmt.Printf("   CPU per URL (this process + targets, medians): (a') %.0f µs, (b) %.0f µs, (c) %.0f µs; (a')/(b) = %.2f, 7·(a')/(c) = %.2f (the ratios a machine of our own would show)\n",
		median(costA2), median(costB), median(costC), median(costA2)/median(costB), 7*median(costA2)/median(costC))
	fmt.Printf("   (c)/((a)/7)  = %.2f   probe URLs vs raw keep-alive GETs / 7\n", median(cOverA))
	fmt.Printf("   (c)/((a')/7) = %.2f   probe URLs vs raw GETs without keep-alive / 7\n", median(cOverA2))
	fmt.Printf("   peak RSS of this process over the scenario: %.1f MB\n", float64(procStatus("VmHWM:"))/1024)
	if cpuprofile != "" {
		fmt.Printf("   CPU profile of (b), round 1, written to %s (go tool pprof -top %s)\n", cpuprofile, cpuprofile)
	}
	return nil
}

// latencyScenario: N URLs at concurrency C against targets that add a fixed
// latency, against the ideal N × latency / C.
func latencyScenario(n, c, perHost, hosts int, latency time.Duration) error {
	t, err := startTargets(defaultHosts(hosts, c, perHost), latency)
	if err != nil {
		return err
	}
	defer t.stop()
	header("latency: scan --op check against a slow target", n, c, perHost, t, latency)
	ideal := time.Duration(float64(n) * float64(latency) / float64(c))
	a2 := rawGET(t, n, c, false)
	printPhase(a2)
	b, err := scanPhase(t, ops.OpCheck, n, c, perHost, "")
	if err != nil {
		return err
	}
	printPhase(b)
	fmt.Printf("   ideal %d × %s / %d = %.3fs; scan took %.3fs = %.2f × ideal (issue target ≤ 1.30); raw no-keep-alive %.2f × ideal\n",
		n, latency, c, ideal.Seconds(), b.wall.Seconds(), b.wall.Seconds()/ideal.Seconds(), a2.wall.Seconds()/ideal.Seconds())
	return nil
}

// memory: scan --op check over N URLs; the process's peak RSS (VmHWM from
// process start, targets excluded: they are another process).
func memory(n, c, perHost, hosts int, latency time.Duration) error {
	t, err := startTargets(defaultHosts(hosts, c, perHost), latency)
	if err != nil {
		return err
	}
	defer t.stop()
	header("memory: peak RSS of scan --op check over "+strconv.Itoa(n)+" URLs", n, c, perHost, t, latency)
	b, err := scanPhase(t, ops.OpCheck, n, c, perHost, "")
	if err != nil {
		return err
	}
	printPhase(b)
	fmt.Printf("   peak RSS of the scanning process since it started: %.1f MB (issue target < 150 MB for 100,000 URLs)\n", float64(procStatus("VmHWM:"))/1024)
	return nil
}
