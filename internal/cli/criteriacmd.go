package cli

import (
	"context"
	"fmt"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
)

func init() {
	register(command{"criteria", "print a published criteria document (payability | rail-probe)", runCriteria})
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
	fs := newFlagSet(e, "criteria", "criteria [payability|rail-probe]")
	pos, err := parseFlags(fs, args)
	if err != nil || len(pos) > 1 {
		return exitUsage
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	svc, ok := serviceArg(name)
	if !ok {
		fmt.Fprintln(e.Stderr, "payability: criteria takes payability or rail-probe")
		return exitUsage
	}
	doc, err := corpus.Criteria(svc)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	e.Stdout.Write(doc)
	fmt.Fprintln(e.Stdout)
	return ExitOK
}

func runCorpus(_ context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "corpus", "corpus verify [-v]")
	verbose := fs.Bool("v", false, "list every case")
	pos, err := parseFlags(fs, args)
	if err != nil || len(pos) != 1 || pos[0] != "verify" {
		fs.Usage()
		return exitUsage
	}
	passed, failed, pinsOK := 0, 0, true
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		s, err := corpus.Run(svc)
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability: %v\n", err)
			return ExitInternal
		}
		pin := "ok"
		if !s.PinOK {
			pin = "MISMATCH (file " + s.PinFile + ")"
			pinsOK = false
		}
		fmt.Fprintf(e.Stdout, "%s  sha256 %s  pin %s  %d cases\n", s.ID, s.PinComp, pin, len(s.Outcomes))
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
