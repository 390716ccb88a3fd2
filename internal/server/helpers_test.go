package server

import (
	"crypto/sha256"
	"io"
	"log/slog"

	"github.com/mr-tron/base58"

	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
)

func base58Encode(b []byte) string { return base58.Encode(b) }

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// testWallet is a Solana wallet address of its own for name: the base58 of
// 32 bytes derived from it.
func testWallet(name string) string {
	sum := sha256.Sum256([]byte(name))
	return base58.Encode(sum[:])
}

// testOffers are the offers of every paid op of the three services, at the
// default prices.
func testOffers() map[string]gate.Offer {
	return map[string]gate.Offer{
		ops.OpCheck:     {Op: ops.OpCheck, Price: 10000, Description: "one payability verdict"},
		ops.OpMemo:      {Op: ops.OpMemo, Price: 10000, Description: "one memo-binding verdict"},
		ops.OpProbe:     {Op: ops.OpProbe, Price: 20000, Description: "one rail-probe report"},
		ops.OpPreflight: {Op: ops.OpPreflight, Price: 20000, Description: "one signed preflight record"},
		ops.OpLint:      {Op: ops.OpLint, Price: 10000, Description: "one signed lint report"},
	}
}

// allPaidRoutes are every paid route of a worker serving all three services.
var allPaidRoutes = []string{"/toll/payability/check", "/toll/payability/memo", "/toll/rail-probe/probe", "/toll/x402/preflight", "/toll/x402/lint"}
