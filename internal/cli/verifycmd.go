package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/report"
)

func init() {
	register(command{"verify", "verify a signed report or pre-check answer offline: verify REPORT.json --jwks URL|FILE", runVerify})
}

// maxVerifyInput bounds what verify reads (a report is a few kilobytes).
const maxVerifyInput = 4 << 20

func runVerify(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "verify", "verify REPORT.json|- --jwks URL|FILE",
		`Checks the Ed25519 signature of a signed report or pre-check answer (- reads it from stdin)
against a key set and says which key signed it.
exit status: 0 VERIFIED; 3 NOT VERIFIED; 1 the report or the key set could not be read; 2 bad usage.`)
	jwks := fs.String("jwks", "", "the signer's key set, `URL|FILE` (required): the URL of a service's /.well-known/jwks.json, or a JWKS file")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	switch {
	case len(pos) != 1:
		return usageError(e, fs, "give exactly one report (a file, or - for stdin)")
	case *jwks == "":
		return usageError(e, fs, "--jwks is required")
	}
	doc, err := readInput(e, pos[0])
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability verify: %v\n", err)
		return ExitInternal
	}
	keysRaw, err := readKeys(ctx, *jwks)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability verify: key set: %v\n", err)
		return ExitInternal
	}
	keys, err := report.ParseJWKS(keysRaw)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability verify: key set: %v\n", err)
		return ExitInternal
	}
	kid, err := report.Verify(doc, keys)
	if err != nil {
		fmt.Fprintf(e.Stdout, "NOT VERIFIED: %v\n", err)
		return ExitUnexpected
	}
	which := "the current key"
	if kid != keys.Current.Kid {
		which = "a retired key"
	}
	fmt.Fprintf(e.Stdout, "VERIFIED: signed by %s (kid %s)\n", which, kid)
	return ExitOK
}

func readInput(e Env, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = e.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxVerifyInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxVerifyInput {
		return nil, errors.New("input is over 4 MiB")
	}
	return b, nil
}

// readKeys reads a JWKS from a file or an http(s) URL (no redirects, 10 s).
func readKeys(ctx context.Context, src string) ([]byte, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return os.ReadFile(src)
	}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, errors.New("the key set could not be fetched")
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the key set URL answered %d", res.StatusCode)
	}
	return io.ReadAll(io.LimitReader(res.Body, 1<<20))
}
