package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/exchangerebel/payability/internal/preflight"
)

func init() {
	register(command{"terms-hash", "print terms_sha256 of every entry of a challenge (a PAYMENT-REQUIRED value or a v1 body)", runTermsHash})
}

// maxTermsInput bounds what terms-hash reads: a challenge is a few kilobytes,
// the fetch body cap is 65,536 bytes.
const maxTermsInput = 1 << 20

func runTermsHash(_ context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "terms-hash", "terms-hash [--json] [FILE|-]",
		`Reads one challenge from FILE or stdin: a PAYMENT-REQUIRED header value (base64 JSON, v2) or a
JSON body (v1, or a v2 document), and prints terms_sha256 of every entry a standard client reads
(docs/preflight.md). An agent compares it with the preflight record's terms_sha256 before it signs.
exit status: 0 at least one entry was hashed; 3 no entry could be hashed; 2 bad usage or unreadable input.`)
	asJSON := fs.Bool("json", false, "print the entries as JSON")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) > 1 {
		return usageError(e, fs, "give at most one FILE (or - for stdin)")
	}
	name := "-"
	if len(pos) == 1 {
		name = pos[0]
	}
	raw, err := readBounded(e, name, maxTermsInput)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability terms-hash: %v\n", err)
		return exitUsage
	}
	hs, ok := preflight.ParseChallenge(raw)
	if !ok {
		fmt.Fprintln(e.Stderr, "payability terms-hash: the input is neither a PAYMENT-REQUIRED value nor a JSON challenge")
		return exitUsage
	}
	if *asJSON {
		b, _ := json.MarshalIndent(map[string]any{"entries": hs}, "", "  ")
		fmt.Fprintf(e.Stdout, "%s\n", b)
	} else {
		for _, h := range hs {
			sum := "-  (incomplete terms: no hash)"
			if h.TermsSHA256 != nil {
				sum = *h.TermsSHA256
			}
			fmt.Fprintf(e.Stdout, "%s accepts[%d] v%d %s %s  %s\n", h.Leg, h.Index, h.X402Version, orDash(h.Scheme), orDash(h.Network), sum)
		}
		if len(hs) == 0 {
			fmt.Fprintln(e.Stdout, "no entry a standard client reads")
		}
	}
	for _, h := range hs {
		if h.TermsSHA256 != nil {
			return ExitOK
		}
	}
	return ExitUnexpected
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
