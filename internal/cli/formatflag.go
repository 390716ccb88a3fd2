package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/ops"
)

// The output formats of --format. "overall" is one word (pass, warn, fail)
// for scripts; the others are docs/ci.md's.
var formatNames = []string{"text", "json", "github", "sarif", "junit", "markdown", "overall"}

// formatSpec is one --format: a format and the file it goes to ("" is
// stdout).
type formatSpec struct {
	name, path string
}

// formatList is the repeatable --format FORMAT[=FILE].
type formatList []formatSpec

func (l *formatList) String() string { return "" }

func (l *formatList) Set(v string) error {
	name, path, _ := strings.Cut(v, "=")
	if !slices.Contains(formatNames, name) {
		return fmt.Errorf("--format must be one of %s, optionally =FILE", quoteList(formatNames))
	}
	if strings.Contains(v, "=") && path == "" {
		return errors.New("--format " + name + "= names no file")
	}
	*l = append(*l, formatSpec{name, path})
	return nil
}

// outputFlags are --format, --json and --fail-on of one command.
type outputFlags struct {
	formats formatList
	json    *bool
	failOn  *string
	// artifact is the file listing the URLs, for SARIF (render's --artifact,
	// scan's input file); "" is format.PlaceholderArtifact.
	artifact string
	// resolved by check
	stdout    string
	files     []formatSpec
	threshold format.FailOn
}

// addOutputFlags declares --format, --json and --fail-on on fs; failOn is
// the command's default threshold.
func addOutputFlags(fs *flagSet, failOn format.FailOn) *outputFlags {
	o := &outputFlags{}
	fs.Var(&o.formats, "format", "write the result as `FORMAT[=FILE]`: "+quoteList(formatNames)+
		" (docs/ci.md); repeat it to write several at once, each to its FILE, at most one to stdout")
	o.json = fs.Bool("json", false, "the same as --format json")
	o.failOn = fs.String("fail-on", string(failOn), "exit 3 when the overall reaches `LEVEL`: error (fail), warn (warn or fail) or never")
	return o
}

// addRenderFlags declares --format and --fail-on without --json (render's
// input is the JSON).
func addRenderFlags(fs *flagSet, failOn format.FailOn) *outputFlags {
	o := &outputFlags{json: new(bool)}
	fs.Var(&o.formats, "format", "write the result as `FORMAT[=FILE]`: "+quoteList(formatNames[:1])+", "+quoteList(formatNames[2:])+
		" (docs/ci.md); repeat it to write several at once, each to its FILE, at most one to stdout")
	o.failOn = fs.String("fail-on", string(failOn), "exit 3 when the overall reaches `LEVEL`: error (fail), warn (warn or fail) or never")
	return o
}

// check validates the flags after parsing; def is the stdout format when no
// --format without a file names one.
func (o *outputFlags) check(def string) error {
	t, err := format.ParseFailOn(*o.failOn)
	if err != nil {
		return err
	}
	o.threshold = t
	o.files = nil
	o.stdout = ""
	if *o.json {
		o.stdout = "json"
	}
	seen := map[string]bool{}
	for _, s := range o.formats {
		if s.path == "" || s.path == "-" {
			if o.stdout != "" && o.stdout != s.name {
				return errors.New("at most one --format goes to stdout (give the others =FILE)")
			}
			o.stdout = s.name
			continue
		}
		if seen[s.path] {
			return errors.New("two --format name the same file")
		}
		seen[s.path] = true
		o.files = append(o.files, s)
	}
	if o.stdout == "" {
		o.stdout = def
	}
	return nil
}

// writeFiles creates each file output (but those of the skipped formats)
// and writes it with write; the first error is returned.
func (o *outputFlags) writeFiles(write func(w io.Writer, name string) error, skip ...string) error {
	for _, s := range o.files {
		if slices.Contains(skip, s.name) {
			continue
		}
		f, err := os.Create(s.path)
		if err != nil {
			return fmt.Errorf("cannot create %s output: %w", s.name, errors.Unwrap(err))
		}
		werr := write(f, s.name)
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			return fmt.Errorf("writing the %s output failed: %w", s.name, err)
		}
	}
	return nil
}

// formatRun builds the render-side run of an op's results.
func formatRun(op string, results []format.Result) format.Run {
	return format.Run{Op: op, ToolVersion: buildinfo.Version, Rules: format.RulesOf(op), Results: results}
}

// loadArtifact names o.artifact for SARIF, with its text when it can be
// read (at most format.MaxArtifactRead bytes; a file that is absent or
// unreadable is still named, its results at line 1).
func (o *outputFlags) loadArtifact() format.Artifact {
	wd, _ := os.Getwd()
	if o.artifact == "" || o.artifact == "-" {
		return format.NewArtifact("", wd, nil)
	}
	var content []byte
	if f, err := os.Open(o.artifact); err == nil {
		raw, err := io.ReadAll(io.LimitReader(f, format.MaxArtifactRead+1))
		f.Close()
		if err == nil && len(raw) <= format.MaxArtifactRead {
			content = raw
		}
	}
	return format.NewArtifact(o.artifact, wd, content)
}

// wantsSARIF reports whether a --format writes sarif.
func (o *outputFlags) wantsSARIF() bool { return o.stdout == "sarif" || o.hasFile("sarif") }

// renderRun writes one of the machine formats (not text or json).
func renderRun(w io.Writer, name string, run format.Run, t format.FailOn) error {
	switch name {
	case "github":
		return format.GitHub(w, run.Results)
	case "sarif":
		return format.SARIF(w, run)
	case "junit":
		return format.JUnit(w, run, t)
	case "markdown":
		return format.Markdown(w, run)
	case "overall":
		return format.WriteOverall(w, run)
	}
	return fmt.Errorf("no %s rendering here", name)
}

// encodeJSON writes v as the reports' indented JSON.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeReport writes one op's report in every requested format. colour is
// for text on stdout.
func (o *outputFlags) writeReport(e Env, rep ops.Report) int {
	run := formatRun(rep.Common().Op, []format.Result{format.FromReport(rep)})
	text := func(w io.Writer, colour bool) error { return renderText(w, rep, colour) }
	if lr, ok := rep.(ops.LintReport); ok {
		text = func(w io.Writer, _ bool) error { return renderLint(w, lr) }
		run.Rules = append(run.Rules, format.ProfileRules(lr.Profile)...)
	}
	return o.writeAll(e, run, text, func(w io.Writer) error { return encodeJSON(w, rep) })
}

// writeAll writes run in every requested format, text and json through the
// op's own renderers.
func (o *outputFlags) writeAll(e Env, run format.Run, text func(w io.Writer, colour bool) error, asJSON func(w io.Writer) error) int {
	if o.wantsSARIF() {
		run.Artifact = o.loadArtifact()
	}
	write := func(w io.Writer, name string, colour bool) error {
		switch name {
		case "text":
			return text(w, colour)
		case "json":
			return asJSON(w)
		}
		return renderRun(w, name, run, o.threshold)
	}
	if err := write(e.Stdout, o.stdout, e.colour(e.Stdout)); err != nil {
		fmt.Fprintf(e.Stderr, "payability: writing the report failed: %v\n", err)
		return ExitInternal
	}
	if err := o.writeFiles(func(w io.Writer, name string) error { return write(w, name, false) }); err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

// tripped reports whether --fail-on trips on overall (the exit status says
// so; nothing is printed, as lint always did).
func (o *outputFlags) tripped(_ Env, overall format.Overall) bool {
	return o.threshold.Trips(overall)
}

// hasFile reports whether a --format writes name to a file.
func (o *outputFlags) hasFile(name string) bool {
	for _, f := range o.files {
		if f.name == name {
			return true
		}
	}
	return false
}

// hasPath reports whether a --format writes to path.
func (o *outputFlags) hasPath(path string) bool {
	for _, f := range o.files {
		if f.path == path {
			return true
		}
	}
	return false
}
