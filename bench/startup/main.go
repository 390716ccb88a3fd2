// Command startup measures how much CPU payability's commands take to start,
// against a Go hello world built by the same Go in the same run (issue 23's
// contract: payability version at most 3× hello world, lint and preflight
// within 1 ms of version; docs/performance.md, "Start-up").
//
//	go run ./bench/startup                 # 30 paired rounds
//	go run ./bench/startup -n 100
//
// It builds hello world, the quick build (-tags quick, released as
// payability) and the full build (released as payabilityd) into a temporary
// directory, then runs every program once per round, in a rotating order so
// neither gains from going first, and reads each child's CPU time (user +
// system) from its rusage. It prints the median of each and its ratio to
// hello world's median. Only the programs it built are run; nothing touches
// the network.
//go:build unix

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

type prog struct {
	label string
	argv  []string
	cpu   []time.Duration
}

func main() {
	n := flag.Int("n", 30, "paired rounds")
	flag.Parse()
	if err := run(*n, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

func run(n int, w io.Writer) error {
	dir, err := os.MkdirTemp("", "startup")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hello := filepath.Join(dir, "hello")
	if err := os.MkdirAll(hello, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(hello, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(hello, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	// The same flags as the release (.goreleaser.yaml): -trimpath, -s -w.
	build := func(wd, out string, args ...string) error {
		cmd := exec.Command("go", append([]string{"build", "-trimpath", "-ldflags", "-s -w", "-o", out}, args...)...)
		cmd.Dir, cmd.Stderr = wd, os.Stderr
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		return cmd.Run()
	}
	if err := build(hello, filepath.Join(dir, "hello.bin"), "."); err != nil {
		return err
	}
	quick, full := filepath.Join(dir, "payability"), filepath.Join(dir, "payabilityd")
	if err := build(".", quick, "-tags", "quick", "./cmd/payability"); err != nil {
		return err
	}
	if err := build(".", full, "./cmd/payability"); err != nil {
		return err
	}
	progs := []*prog{
		{label: "hello world", argv: []string{filepath.Join(dir, "hello.bin")}},
		{label: "payability version (quick build)", argv: []string{quick, "version"}},
		{label: "payability lint --help (quick build)", argv: []string{quick, "lint", "--help"}},
		{label: "payability preflight --help (quick build)", argv: []string{quick, "preflight", "--help"}},
		{label: "payabilityd version (full build)", argv: []string{full, "version"}},
	}
	for _, p := range progs { // warm the page cache
		if _, err := cpuOf(p.argv); err != nil {
			return fmt.Errorf("%s: %w", p.label, err)
		}
	}
	for r := 0; r < n; r++ {
		for i := range progs {
			p := progs[(i+r)%len(progs)]
			d, err := cpuOf(p.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", p.label, err)
			}
			p.cpu = append(p.cpu, d)
		}
	}
	base := median(progs[0].cpu)
	version := median(progs[1].cpu)
	fmt.Fprintf(w, "start-up CPU (user + system, median of %d paired runs)\n", n)
	for _, p := range progs {
		m := median(p.cpu)
		fmt.Fprintf(w, "  %-44s %8.3f ms  %5.2f × hello world", p.label, ms(m), float64(m)/float64(base))
		if strings.Contains(p.label, "--help") {
			fmt.Fprintf(w, "  %+.3f ms vs version", ms(m-version))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// cpuOf runs argv with its output discarded and returns the CPU time the
// child used (os/exec starts it with vfork, so the parent's memory is not
// copied into its account).
func cpuOf(argv []string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
