package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The machine may be shared: other work on the same cores slows every phase
// and makes ratios between phases noisy. Each phase therefore reports where
// the CPU went while it ran: this process, the targets' process, and
// everything else on the machine (from /proc, in clock ticks).

type cpuSample struct {
	busy, total int64 // machine-wide, all CPUs (/proc/stat)
	irq, steal  int64 // of which: interrupt and softirq time (loopback TCP runs there), and time the hypervisor gave to other machines
	self, child int64 // utime+stime of this process and of the targets
}

func sampleCPU(childPID int) cpuSample {
	var s cpuSample
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(data), "\n")
		f := strings.Fields(line)
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.total += n
			if i != 3 && i != 4 { // idle and iowait
				s.busy += n
			}
			switch i {
			case 5, 6: // irq, softirq
				s.irq += n
			case 7:
				s.steal += n
			}
		}
	}
	s.self = procTicks("self")
	if childPID > 0 {
		s.child = procTicks(strconv.Itoa(childPID))
	}
	return s
}

// procTicks is utime+stime of a process (/proc/PID/stat fields 14 and 15).
func procTicks(pid string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces; fields restart after its ')'.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// cpuShare is how the machine's CPU was spent between two samples, as
// percentages of all CPUs.
type cpuShare struct{ self, targets, irq, steal, others, idle float64 }

func shareBetween(a, b cpuSample) cpuShare {
	total := float64(b.total - a.total)
	if total <= 0 {
		return cpuShare{}
	}
	self := float64(b.self - a.self)
	child := float64(b.child - a.child)
	busy := float64(b.busy - a.busy)
	irq := float64(b.irq - a.irq)
	steal := float64(b.steal - a.steal)
	return cpuShare{
		self:    100 * self / total,
		targets: 100 * child / total,
		irq:     100 * irq / total,
		steal:   100 * steal / total,
		others:  100 * max(0, busy-self-child-irq-steal) / total,
		idle:    100 * (total - busy) / total,
	}
}

func (c cpuShare) String() string {
	return fmt.Sprintf("cpu: scanner %2.0f%% targets %2.0f%% softirq %2.0f%% steal %2.0f%% other %2.0f%% idle %2.0f%%", c.self, c.targets, c.irq, c.steal, c.others, c.idle)
}

// waitIdle waits, up to limit, until the machine has been nearly idle (under
// 15% of all CPUs busy) for a whole second, so that a phase does not share
// the cores with someone else's work. It reports whether it was.
func waitIdle(limit time.Duration) bool {
	if limit <= 0 {
		return true
	}
	deadline := time.Now().Add(limit)
	for {
		a := sampleCPU(0)
		time.Sleep(time.Second)
		b := sampleCPU(0)
		if total := b.total - a.total; total > 0 && float64(b.busy-a.busy)/float64(total) < 0.15 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
