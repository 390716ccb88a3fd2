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

// Run dispatches to a subcommand.
func (e Env) Run(ctx context.Context, args []string) int {
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		e.usage(e.Stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return ExitOK
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(e.Stdout, "payability", buildinfo.Version)
		return ExitOK
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
	fmt.Fprintln(w, "\nRun 'payability <command> -h' for a command's flags.")
}

func (e Env) fetcher(allowPrivate bool) ops.Fetcher {
	if e.NewFetcher != nil {
		return e.NewFetcher(allowPrivate)
	}
	return target.New(target.Options{AllowPrivate: allowPrivate, UserAgent: buildinfo.UserAgent})
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
	if e.IsTerminal != nil {
		return e.IsTerminal(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// parseFlags parses flags that may stand before or after the positional
// arguments ("payability check URL --json" works as well).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
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

func newFlagSet(e Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "usage: payability %s\n", usage)
		fs.PrintDefaults()
	}
	return fs
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
