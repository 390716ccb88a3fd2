// Package cli is payability's command line: one type and one FlagSet per
// subcommand, writing only to the writers it is given, so tests run it
// in-process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// Exit statuses.
const (
	ExitOK         = 0 // a verdict was produced, whatever it is
	ExitInternal   = 1 // an internal error
	ExitRefused    = 2 // the URL was refused by the target-URL policy, or bad usage
	ExitUnexpected = 3 // --expect / --expect-closed did not hold
	exitUsage      = ExitRefused
)

// Env is everything a subcommand may touch. Tests replace any part of it.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// NewFetcher builds the target fetcher; nil means the guarded target client.
	NewFetcher func(allowPrivate bool) ops.Fetcher
	// FetchTimeout, when set, bounds one request of the guarded target
	// client instead of target.DefaultTimeout (a test holds requests at a
	// seller for as long as its barrier needs, none timing out).
	FetchTimeout time.Duration
	// NewCatalogFetcher builds the client catalogs are read with; nil means
	// the guarded target client with the catalogs' body cap.
	NewCatalogFetcher func(allowPrivate bool) monitor.CatalogFetcher
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// IsTerminal reports whether w is a terminal (colour); nil means detect.
	IsTerminal func(w io.Writer) bool
}

// Run is payability's main: it runs the subcommand named by args[0].
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Env{Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr}.Run(ctx, args)
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e Env, args []string) int
}

var commands []command

func register(c command) { commands = append(commands, c) }

// Run dispatches to a subcommand. Whatever the command, a failed write to
// stdout (a closed pipe, a full disk) makes the exit status 1: output that
// did not arrive is never reported as success.
func (e Env) Run(ctx context.Context, args []string) int {
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	out := &checkedWriter{w: e.Stdout}
	e.Stdout = out
	code := e.dispatch(ctx, args)
	if out.err != nil {
		fmt.Fprintf(e.Stderr, "payability: writing the output failed: %v\n", out.err)
		return ExitInternal
	}
	return code
}

// checkedWriter remembers the first write error; later writes are dropped.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

func (e Env) dispatch(ctx context.Context, args []string) int {
	if len(args) == 0 {
		e.usage(e.Stderr)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		// "payability help CMD" is "payability CMD -h".
		if len(args) > 1 && args[0] == "help" {
			for _, c := range commands {
				if c.name == args[1] {
					return c.run(ctx, e, []string{"-h"})
				}
			}
			fmt.Fprintf(e.Stderr, "payability: unknown command %q\n", args[1])
			e.usage(e.Stderr)
			return exitUsage
		}
		e.usage(e.Stdout)
		return ExitOK
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.Stderr, "payability: unknown command %q\n", args[0])
	e.usage(e.Stderr)
	return exitUsage
}

func (e Env) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: payability <command> [flags] [args]")
	fmt.Fprintln(w)
	cs := append([]command(nil), commands...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'payability <command> -h' (or 'payability help <command>') for a command's flags.")
}

func (e Env) fetcher(allowPrivate bool) ops.Fetcher { return e.fetcherLimited(allowPrivate, 0) }

// fetcherLimited is fetcher with at most hostConns simultaneous connections
// to one target host over every request of the command
// (target.DefaultHostConns when 0).
func (e Env) fetcherLimited(allowPrivate bool, hostConns int) ops.Fetcher {
	return e.fetcherWith(allowPrivate, target.NewHostLimit(hostConns))
}

// fetcherWith is fetcher under the per-host limit hl.
func (e Env) fetcherWith(allowPrivate bool, hl *target.HostLimit) ops.Fetcher {
	if e.NewFetcher != nil {
		return e.NewFetcher(allowPrivate)
	}
	return target.New(target.Options{AllowPrivate: allowPrivate, UserAgent: buildinfo.UserAgent, HostLimit: hl, Timeout: e.FetchTimeout})
}

func (e Env) now() func() time.Time {
	if e.Now != nil {
		return e.Now
	}
	return time.Now
}

// colour reports whether output to w may use colour: a terminal and no NO_COLOR.
func (e Env) colour(w io.Writer) bool {
	if e.Getenv("NO_COLOR") != "" || e.Getenv("TERM") == "dumb" {
		return false
	}
	if c, ok := w.(*checkedWriter); ok {
		w = c.w
	}
	if e.IsTerminal != nil {
		return e.IsTerminal(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// flagSet is a subcommand's flags with its command line and the notes that
// end its help.
type flagSet struct {
	*flag.FlagSet
	usage string
	notes []string
}

// newFlagSet makes a subcommand's flag set. A usage mistake prints the
// command line on stderr; -h prints the whole help on stdout: the command
// line, every flag with its placeholder, description and default, then the
// notes. Every flag that takes a value names its placeholder in backquotes
// in its description (flag.UnquoteUsage), so the help never says "string".
func newFlagSet(e Env, name, usage string, notes ...string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage, notes: notes}
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: payability %s\nRun 'payability %s -h' for its flags.\n", fs.usage, fs.Name())
	}
	return fs
}

// parseFlags parses flags that may stand before or after the positional
// arguments ("payability check URL --json" works as well). -h or --help
// prints the help on stdout and returns flag.ErrHelp; any other flag error
// is printed, with the command line, on stderr. usageExit turns either into
// the exit status.
func parseFlags(e Env, fs *flagSet, args []string) ([]string, error) {
	var positional []string
	out := fs.Output()
	for {
		// flag prints its own message and the usage while parsing; we print
		// ours instead.
		fs.SetOutput(io.Discard)
		err := fs.Parse(args)
		fs.SetOutput(out)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.help(e.Stdout)
			return nil, err
		case err != nil:
			fmt.Fprintf(out, "payability %s: %v\n", fs.Name(), err)
			fs.Usage()
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// usageExit is the exit status after parseFlags failed: 0 for -h, else 2.
func usageExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return exitUsage
}

// usageError prints a usage mistake and the command line on stderr and
// returns exit status 2.
func usageError(e Env, fs *flagSet, format string, args ...any) int {
	fmt.Fprintf(e.Stderr, "payability %s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitUsage
}

// help prints the whole help of a subcommand.
func (fs *flagSet) help(w io.Writer) {
	fmt.Fprintf(w, "usage: payability %s\n", fs.usage)
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w)
			first = false
		}
		placeholder, desc := flag.UnquoteUsage(f)
		if placeholder != "" {
			placeholder = " " + placeholder
		}
		if d := f.DefValue; d != "" && d != "false" && !strings.Contains(desc, "(default") {
			desc += " (default " + d + ")"
		}
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		fmt.Fprintf(w, "  %s%s%s\n        %s\n", dashes, f.Name, placeholder, desc)
	})
	for _, n := range fs.notes {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

// refusal prints a URL-policy refusal and returns its exit status.
func refusal(e Env, err error) int {
	var pe *target.PolicyError
	if errors.As(err, &pe) {
		fmt.Fprintf(e.Stderr, "payability: %s\n", pe.Error())
		return ExitRefused
	}
	fmt.Fprintf(e.Stderr, "payability: %v\n", err)
	return ExitInternal
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

func quoteList(set []string) string { return strings.Join(set, ", ") }
