//go:build unix

// Package benchcpu reports a benchmark's CPU time per op, for the
// benchmarks of the packages that measure speed (docs/performance.md). It is
// imported by tests only.
package benchcpu

import (
	"syscall"
	"testing"
	"time"
)

// Report starts counting the process's CPU time (user + system, all
// threads) and returns the function that reports it per op as cpu-ns/op:
//
//	defer benchcpu.Report(b)()
//
// Unlike ns/op, it hardly moves when other processes share the cores. It
// divides by b.N, which after a b.Loop loop is the number of iterations.
func Report(b *testing.B) func() {
	start := processTime()
	return func() { b.ReportMetric(float64(processTime()-start)/float64(b.N), "cpu-ns/op") }
}

func processTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
