package cli

import (
	"context"
	"fmt"
	"github.com/exchangerebel/payability/internal/lint"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/preflight"
)

func init() {
	register(command{"criteria", "print a published criteria document (payability | rail-probe | x402-lint | x402-preflight)", runCriteria})
	register(command{"corpus", "corpus verify: recompute the pins and run every corpus case", runCorpus})
}

func serviceArg(s string) (string, bool) {
	switch s {
	case "", "payability", criteria.ServicePayability:
		return criteria.ServicePayability, true
	case "rail-probe", "railprobe", "probe":
		return criteria.ServiceRailProbe, true
	}
	return "", false
}

func runCriteria(_ context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "criteria", "criteria [payability|rail-probe|x402-lint|x402-lint-profiles|x402-preflight]",
		"Prints the published criteria document (payability by default) or the x402-lint/v1 rules or the x402-preflight/v1 document as JSON, with corpus.sha256 set to the pin of the embedded corpus; x402-lint-profiles prints the directory profiles of lint --profile.")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) > 1 {
		return usageError(e, fs, "give at most one document: payability, rail-probe, x402-lint or x402-preflight")
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	var doc []byte
	switch name {
	case "x402-lint", "lint":
		doc, err = corpus.LintRules()
	case "x402-lint-profiles", "profiles":
		doc = lint.ProfilesRaw()
	case "x402-preflight", "preflight", preflight.DocumentID:
		doc, err = corpus.PreflightDocument()
	default:
		svc, ok := serviceArg(name)
		if !ok {
			return usageError(e, fs, "the document is payability, rail-probe, x402-lint or x402-preflight")
		}
		doc, err = corpus.Criteria(svc)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	e.Stdout.Write(doc)
	fmt.Fprintln(e.Stdout)
	return ExitOK
}

func runCorpus(_ context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "corpus", "corpus verify [-v]",
		"Recomputes every corpus pin (payability, rail-probe, x402-lint, x402-preflight) and compares it with the file's and the one built into this binary, runs every case through the graders and prints N passed, M failed.\nexit status: 0 every case passed and every pin matches; 1 otherwise; 2 bad usage.")
	verbose := fs.Bool("v", false, "list every case, not only the failures")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 1 || pos[0] != "verify" {
		return usageError(e, fs, "the only subcommand is verify")
	}
	ids := 0
	for _, svc := range corpus.Services() {
		ids = max(ids, len(corpus.RefOf(svc).ID))
	}
	ids = max(ids, len(corpus.LintRef().ID), len(preflight.CorpusID))
	passed, failed, pinsOK := 0, 0, true
	for _, svc := range append(corpus.Services(), "x402-lint", preflight.DocumentID) {
		var s corpus.Summary
		var err error
		switch svc {
		case "x402-lint":
			s, err = corpus.RunLint()
		case preflight.DocumentID:
			s, err = corpus.RunPreflight()
		default:
			s, err = corpus.Run(svc)
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability: %v\n", err)
			return ExitInternal
		}
		pin := "ok"
		if !s.PinOK {
			pin = "MISMATCH (file " + s.PinFile + ", built " + s.PinBuilt + ")"
			pinsOK = false
		}
		fmt.Fprintf(e.Stdout, "%-*s  sha256 %s  pin %s  %d cases\n", ids, s.ID, s.PinComp, pin, len(s.Outcomes))
		for _, o := range s.Outcomes {
			switch {
			case !o.Passed:
				fmt.Fprintf(e.Stdout, "  FAIL %s: %s\n", o.ID, o.Problem)
			case *verbose:
				fmt.Fprintf(e.Stdout, "  ok   %s\n", o.ID)
			}
		}
		passed += s.Passed()
		failed += s.Failed()
	}
	fmt.Fprintf(e.Stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 || !pinsOK || passed == 0 {
		return ExitInternal
	}
	return ExitOK
}
