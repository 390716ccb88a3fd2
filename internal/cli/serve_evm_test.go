//go:build !quick

package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
)

// serve --evm-pay-to builds the EVM entry on the chosen network into the
// gate's terms and the facilitator rail (with its discovered versions and,
// with --evm-rpc, its node); a facilitator that does not settle exact on
// that network is a failure to start (exit 1), never a silent Solana-only
// deployment.
func TestServeBuildsTheEVMEntry(t *testing.T) {
	fake := facilitatortest.New(t)
	e := Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard}
	f := serveFlags{addr: "127.0.0.1:0", dataDir: t.TempDir(), service: "all", payTo: wallet, tokenAccount: account,
		facilitator: fake.URL, network: "solana", commitment: "confirmed", maxTimeout: 120,
		evmPayTo: strings.ToLower(evmPayee), evmNetwork: "eip155:84532", evmRPC: "http://127.0.0.1:1/"}
	evm, err := evmTerms(f)
	if err != nil {
		t.Fatal(err)
	}
	terms := gate.Terms{Network: gate.Mainnet, PayTo: wallet, TokenAccount: account, MaxTimeoutSeconds: 120, EVM: evm}
	rail, err := facilitatorRail(context.Background(), f, &terms)
	if err != nil {
		t.Fatal(err)
	}
	if terms.EVM == nil || terms.EVM.Network != gate.BaseSepolia || terms.EVM.PayTo != evmPayee ||
		rail.Terms.EVM != terms.EVM || !rail.EVMVersions[1] || !rail.EVMVersions[2] || rail.EVMChain == nil {
		t.Errorf("terms %+v, rail EVM %+v versions %v chain %v", terms.EVM, rail.Terms.EVM, rail.EVMVersions, rail.EVMChain)
	}
	if got := describeServe(f); !strings.Contains(got, "facilitator on eip155:84532") {
		t.Errorf("describeServe: %s", got)
	}

	solanaOnly := facilitatortest.New(t)
	solanaOnly.Supported = `{"kinds":[{"x402Version":2,"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","extra":{"feePayer":"` + solanaOnly.FeePayer + `"}}]}`
	var errb bytes.Buffer
	e.Stderr = &errb
	code := e.Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--pay-to", wallet,
		"--token-account", account, "--facilitator", solanaOnly.URL, "--evm-pay-to", evmPayee})
	if code != ExitInternal || !strings.Contains(errb.String(), "eip155:8453") || !strings.Contains(errb.String(), "--evm-pay-to") {
		t.Errorf("a facilitator without Base: exit %d, %s", code, errb.String())
	}
}
