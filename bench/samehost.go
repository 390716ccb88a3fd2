package main

import (
	"fmt"
	"time"

	"github.com/exchangerebel/payability/internal/ops"
)

// sameHost: every URL on one host, so the scan runs at most perHost ops at
// once and reuses the connections of its run. It is held against the raw
// client with keep-alive at the same number of requests in flight (perHost
// goroutines): what one host allows a polite client that keeps its
// connections. Ratios are between requests per second, since memo sends 2
// per URL and probe 7.
func sameHost(n, perHost, rounds int, cpuprofile string, idle time.Duration) error {
	t, err := startTargets(1, 0)
	if err != nil {
		return err
	}
	defer t.stop()
	header("same host: scan --op check|memo|probe vs raw keep-alive GETs, one host", n, perHost, perHost, t, 0)
	fmt.Printf("   %d rounds; the raw client runs %d goroutines (the scan's per-host limit) with keep-alive; memo scans n/2 URLs, probe n/7, so each phase sends about n requests\n", rounds, perHost)
	rawGET(t, min(n, 2000), perHost, true) // warm-up
	var check, memo, probe []float64
	for r := 1; r <= rounds; r++ {
		idleOrWarn(idle)
		fmt.Printf("   round %d\n", r)
		a := rawGET(t, n, perHost, true)
		printPhase(a)
		prof := ""
		if r == 1 {
			prof = cpuprofile
		}
		b, err := scanPhase(t, ops.OpCheck, n, 64, perHost, prof)
		if err != nil {
			return err
		}
		printPhase(b)
		m, err := scanPhase(t, ops.OpMemo, max(1, n/2), 64, perHost, "")
		if err != nil {
			return err
		}
		printPhase(m)
		c, err := scanPhase(t, ops.OpProbe, max(1, n/7), 64, perHost, "")
		if err != nil {
			return err
		}
		printPhase(c)
		check = append(check, b.reqRate()/a.reqRate())
		memo = append(memo, m.reqRate()/a.reqRate())
		probe = append(probe, c.reqRate()/a.reqRate())
	}
	fmt.Printf("   check/raw = %.2f, memo/raw = %.2f, probe/raw = %.2f   requests per second, medians (issue goal >= 0.85, floor 0.70)\n",
		median(check), median(memo), median(probe))
	return nil
}
