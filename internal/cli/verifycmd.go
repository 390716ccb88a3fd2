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
	register(command{"verify", "verify a signed report, pre-check answer, preflight record or paid lint report offline: verify REPORT.json --jwks URL|FILE | --key FILE", runVerify})
}

// maxVerifyInput bounds what verify reads (a report is a few kilobytes).
const maxVerifyInput = 4 << 20

func runVerify(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "verify", "verify REPORT.json|- [--jwks URL|FILE] [--key FILE]",
		`Checks the Ed25519 signature of a signed report, pre-check answer, preflight record or lint report (- reads it
from stdin) against a key set, or against the key file a preflight was signed with (--key), and
says which key signed it.
exit status: 0 VERIFIED; 3 NOT VERIFIED; 1 the report or the key set could not be read; 2 bad usage.`)
	jwks := fs.String("jwks", "", "the signer's key set, `URL|FILE`: the URL of a service's /.well-known/jwks.json, or a JWKS file")
	keyFile := fs.String("key", "", "the signer's Ed25519 key `FILE` (PEM PKCS#8, as preflight --sign-key takes)")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	switch {
	case len(pos) != 1:
		return usageError(e, fs, "give exactly one report (a file, or - for stdin)")
	case (*jwks == "") == (*keyFile == ""):
		return usageError(e, fs, "give exactly one of --jwks and --key")
	}
	doc, err := readInput(e, pos[0])
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability verify: %v\n", err)
		return ExitInternal
	}
	keys, err := verifyKeys(ctx, *jwks, *keyFile)
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

// verifyKeys is the key set of --jwks, or the one key of --key.
func verifyKeys(ctx context.Context, jwks, keyFile string) (report.KeySet, error) {
	if keyFile != "" {
		k, err := report.LoadKeyFile(keyFile)
		if err != nil {
			return report.KeySet{}, errors.New("the key file cannot be used")
		}
		return report.NewKeySet(k), nil
	}
	raw, err := readKeys(ctx, jwks)
	if err != nil {
		return report.KeySet{}, err
	}
	return report.ParseJWKS(raw)
}
