package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/scan"
	"github.com/exchangerebel/payability/internal/target"
)

// phase is the measurement of one load phase.
type phase struct {
	name     string
	urls     int // URLs (scan) or requests (raw)
	requests int // HTTP requests sent
	wall     time.Duration
	peakRSS  int64 // kB, VmHWM since the phase began
	ok       int   // raw: 402 answers; scan: reports
	note     string
	cpu      cpuShare
}

func (p phase) rate() float64 { return float64(p.urls) / p.wall.Seconds() }

func (p phase) reqRate() float64 { return float64(p.requests) / p.wall.Seconds() }

// cost is the CPU spent per URL by this process and the targets together,
// in microseconds: unlike the rate, it hardly moves when other work shares
// the machine.
func (p phase) cost() float64 {
	cpus := float64(runtime.NumCPU())
	return (p.cpu.self + p.cpu.targets) / 100 * cpus * p.wall.Seconds() / float64(p.urls) * 1e6
}

// rawGET sends n plain GETs to the targets from c goroutines with a minimal
// Go HTTP client: the physical limit the scanner is held against.
func rawGET(t *targets, n, c int, keepAlive bool) phase {
	tr := &http.Transport{
		Proxy:               nil,
		DisableKeepAlives:   !keepAlive,
		DisableCompression:  true,
		MaxIdleConns:        2 * c,
		MaxIdleConnsPerHost: c,
	}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	resetPeakRSS()
	before := sampleCPU(t.pid())
	var next, got402 atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				resp, err := client.Get(t.url(i))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusPaymentRequired {
					got402.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	name := "(a)  raw GET, keep-alive"
	if !keepAlive {
		name = "(a') raw GET, no keep-alive"
	}
	wall := time.Since(start)
	return phase{name: name, urls: n, requests: n, wall: wall, peakRSS: peakRSS(), ok: int(got402.Load()), cpu: shareBetween(before, sampleCPU(t.pid()))}
}

// bareOps runs ops.Runner.Check over n URLs from c goroutines, with no
// scanner around it (no input parsing, per-host limit, records or summary)
// but on a connection pool like a scan run's: what (b) would reach if the
// scanner cost nothing.
func bareOps(t *targets, n, c, perHost int) phase {
	pool := target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}).Pool(perHost)
	defer pool.Close()
	r := ops.Runner{Fetcher: pool}
	runtime.GC()
	resetPeakRSS()
	before := sampleCPU(t.pid())
	var next, reports atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if rep, err := r.Check(context.Background(), t.url(i)); err == nil && rep.State != "" {
					reports.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	return phase{name: "(b0) ops.Check, no scanner", urls: n, requests: n, wall: wall, peakRSS: peakRSS(), ok: int(reports.Load()), cpu: shareBetween(before, sampleCPU(t.pid()))}
}

// urlLines streams "URL\n" lines for n URLs spread over the targets, without
// holding them: the scanner's input, as a file or a pipe would give it.
type urlLines struct {
	t    *targets
	n, i int
	buf  []byte
}

func (u *urlLines) Read(p []byte) (int, error) {
	for len(u.buf) < len(p) && u.i < u.n {
		u.buf = append(u.buf, u.t.url(u.i)...)
		u.buf = append(u.buf, '\n')
		u.i++
	}
	if len(u.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, u.buf)
	u.buf = u.buf[:copy(u.buf, u.buf[k:])]
	return k, nil
}

// scanPhase runs the scan package in-process over n URLs, exactly as
// `payability scan --op OP --allow-private --out /dev/null` does (the
// targets are loopback). Records go to /dev/null through a real file.
func scanPhase(t *targets, op string, n, c, perHost int, cpuprofile string) (phase, error) {
	out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return phase{}, err
	}
	defer out.Close()
	sc := scan.New(scan.Options{
		Op:          op,
		Runner:      ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent})},
		Concurrency: c,
		PerHost:     perHost,
		Out:         out,
	})
	runtime.GC()
	resetPeakRSS()
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return phase{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return phase{}, err
		}
		defer pprof.StopCPUProfile()
	}
	before := sampleCPU(t.pid())
	start := time.Now()
	sum, err := sc.Run(context.Background(), scan.NewInput(&urlLines{t: t, n: n}))
	wall := time.Since(start)
	share := shareBetween(before, sampleCPU(t.pid()))
	if err != nil {
		return phase{}, err
	}
	perURL := map[string]int{ops.OpCheck: 1, ops.OpMemo: 2, ops.OpProbe: 7}[op]
	p := phase{name: "(" + map[string]string{ops.OpCheck: "b", ops.OpProbe: "c", ops.OpMemo: "m"}[op] + ")  scan --op " + op, urls: n, requests: n * perURL, wall: wall, peakRSS: peakRSS(), ok: sum.Reports, cpu: share}
	p.note = outcomes(sum)
	return p, nil
}

func outcomes(s scan.Summary) string {
	var parts []string
	for k, v := range s.Outcomes {
		if v > 0 {
			parts = append(parts, k+" "+strconv.Itoa(v))
		}
	}
	for k, v := range s.Direct {
		if v > 0 {
			parts = append(parts, "direct "+k+" "+strconv.Itoa(v))
		}
	}
	if s.Refused+s.Errors > 0 {
		parts = append(parts, fmt.Sprintf("refused %d errors %d", s.Refused, s.Errors))
	}
	return strings.Join(parts, ", ")
}

// resetPeakRSS restarts the kernel's peak-RSS count (VmHWM) of this
// process at its current RSS (Linux: "5" to /proc/self/clear_refs).
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is VmHWM in kB: this process's peak resident set since it began
// or since resetPeakRSS.
func peakRSS() int64 { return procStatus("VmHWM:") }

func procStatus(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(line[len(field):])
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return -1
}
