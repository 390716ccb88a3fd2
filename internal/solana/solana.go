// Package solana is the chain back end of the direct payment rail: a thin
// JSON-RPC client that fetches a transaction in jsonParsed form, and a pure
// check that the transaction paid our token account enough USDC under the
// memo we issued.
//
// No Solana SDK: one RPC method and a handful of fields do not earn one (see
// docs/dependencies.md).
package solana

import "github.com/mr-tron/base58"

// Networks, as CAIP-2 ids (the x402 v2 "network"), and their USDC mints.
const (
	MainnetCAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	DevnetCAIP2  = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"

	USDCMainnetMint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	USDCDevnetMint  = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"

	// USDCDecimals: 10000 base units are $0.01.
	USDCDecimals = 6
)

// Programs whose instructions and balances a payment is read from.
const (
	TokenProgram     = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" // SPL Token (classic)
	Token2022Program = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" // SPL Token-2022
	MemoProgramV1    = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"
	MemoProgramV2    = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
)

// Commitment levels the client may ask for.
const (
	CommitmentConfirmed = "confirmed" // the default
	CommitmentFinalized = "finalized"
)

// maxSignatureText is the longest base58 text of 64 bytes.
const maxSignatureText = 88

// ValidSignature reports whether s is a transaction signature: the
// canonical base58 text of exactly 64 bytes. Canonical matters: a payment is
// claimed by its signature text, so two spellings of one signature must not
// both pass.
func ValidSignature(s string) bool {
	if s == "" || len(s) > maxSignatureText {
		return false
	}
	b, err := base58.Decode(s)
	if err != nil || len(b) != 64 {
		return false
	}
	return base58.Encode(b) == s
}
