package server

import (
	"crypto/sha256"
	"io"
	"log/slog"

	"github.com/mr-tron/base58"
)

func base58Encode(b []byte) string { return base58.Encode(b) }

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// testWallet is a Solana wallet address of its own for name: the base58 of
// 32 bytes derived from it.
func testWallet(name string) string {
	sum := sha256.Sum256([]byte(name))
	return base58.Encode(sum[:])
}
