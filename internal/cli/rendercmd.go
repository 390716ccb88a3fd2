package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/exchangerebel/payability/internal/format"
)

func init() {
	register(command{"render", "render saved JSON reports or scan records as text, github, sarif, junit, markdown or overall", runRender})
}

func runRender(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "render", "render [--format FORMAT[=FILE]]... [--fail-on LEVEL] [--artifact PATH] [--config FILE] [--write-baseline FILE] [REPORTS.json | -]",
		`Input (a file, or stdin when none or -): what payability printed as JSON, one value or many:
reports of one op (check, memo, probe or preflight --json, indented or one per line) or the JSON
Lines of a scan. Each is rendered as the op's own --format would (docs/ci.md); text is one line
per endpoint. Nothing is fetched.
exit status: 0 rendered; 1 the input is not payability's JSON (the message names the value), or a
failed write; 2 bad usage; 3 the overall reached --fail-on.`)
	out := addRenderFlags(fs, format.FailOnNever)
	artifact := fs.String("artifact", "", "the repository file that lists the URLs, as `PATH` from the repository root: SARIF locates every result there, at the line naming its URL (default "+format.PlaceholderArtifact+"; docs/ci.md)")
	sup := addSuppressFlags(fs)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if err := out.check("text"); err != nil {
		return usageError(e, fs, "%v", err)
	}
	if out.stdout == "json" || out.hasFile("json") {
		return usageError(e, fs, "render writes the other formats; its input is the JSON")
	}
	if len(pos) > 1 {
		return usageError(e, fs, "give at most one input (a file, or - for stdin)")
	}
	if err := sup.load(e); err != nil {
		return usageError(e, fs, "%v", err)
	}
	var in io.Reader = e.Stdin
	if len(pos) == 1 && pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability: cannot open the input: %v\n", errors.Unwrap(err))
			return ExitInternal
		}
		defer f.Close()
		in = f
	}
	if in == nil {
		in = eofReader{}
	}
	op, results, err := format.ReadReports(in)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability render: %v\n", err)
		return ExitInternal
	}
	out.artifact = *artifact
	if err := sup.apply(results); err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	sup.warn(e)
	run := formatRun(op, results)
	run.Baselined = sup.baseline != nil
	code := out.writeAll(e, run,
		func(w io.Writer, _ bool) error { return format.Lines(w, run.Results) },
		func(io.Writer) error { return errors.New("no json output") })
	if code != ExitOK {
		return code
	}
	if out.tripped(e, run.Overall()) {
		return ExitUnexpected
	}
	return ExitOK
}
