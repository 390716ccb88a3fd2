package chain

import (
	"crypto/sha256"
	"errors"

	"filippo.io/edwards25519"
	"github.com/mr-tron/base58"
)

// Solana program ids the readiness look-ups use.
const (
	TokenProgram           = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	Token2022Program       = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
	AssociatedTokenProgram = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
	pdaMarker              = "ProgramDerivedAddress"
)

// ErrNoPDA: no bump seed gives an off-curve address (practically never).
var ErrNoPDA = errors.New("chain: no program address for these seeds")

// onCurve reports whether 32 bytes decode to a point of edwards25519 (the
// decoding accepts non-canonical encodings, as Solana's runtime does). A
// program derived address must not be on the curve: no private key exists
// for it.
func onCurve(b [32]byte) bool {
	_, err := new(edwards25519.Point).SetBytes(b[:])
	return err == nil
}

// FindProgramAddress derives a program address from seeds: for bump 255
// down to 0, SHA-256 of the seeds, the bump, the program id and the marker
// "ProgramDerivedAddress"; the first result off the curve wins.
func FindProgramAddress(seeds [][]byte, program [32]byte) ([32]byte, uint8, error) {
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		for _, s := range seeds {
			h.Write(s)
		}
		h.Write([]byte{byte(bump)})
		h.Write(program[:])
		h.Write([]byte(pdaMarker))
		var out [32]byte
		copy(out[:], h.Sum(nil))
		if !onCurve(out) {
			return out, uint8(bump), nil
		}
	}
	return [32]byte{}, 0, ErrNoPDA
}

// AssociatedTokenAddress derives the associated token account of owner for
// mint under a token program (seeds: owner, token program, mint; program:
// the associated token account program).
func AssociatedTokenAddress(owner, tokenProgram, mint [32]byte) ([32]byte, error) {
	ata, _ := key(AssociatedTokenProgram)
	out, _, err := FindProgramAddress([][]byte{owner[:], tokenProgram[:], mint[:]}, ata)
	return out, err
}

// key decodes a base58 Solana address.
func key(s string) ([32]byte, bool) {
	var k [32]byte
	b, err := base58.Decode(s)
	if err != nil || len(b) != 32 {
		return k, false
	}
	copy(k[:], b)
	return k, true
}

// Base58 encodes a 32-byte key.
func Base58(k [32]byte) string { return base58.Encode(k[:]) }
