package lint

import (
	"encoding/hex"
	"strings"

	"github.com/mr-tron/base58"
	"golang.org/x/crypto/sha3"
)

// Placeholder payees: funds sent there are lost or the transfer fails.
const (
	evmZeroAddress      = "0x0000000000000000000000000000000000000000"
	solanaSystemProgram = "11111111111111111111111111111111"
)

// addressProblem is what is wrong with an address for a family: "" when it
// is valid, else the rule id.
func addressProblem(f Family, s string) string {
	switch f {
	case FamilySolana:
		if !SolanaAddress(s) {
			return ruleAddressInvalid
		}
	case FamilyEVM:
		if !evmShape(s) {
			return ruleAddressInvalid
		}
		if !EIP55Valid(s) {
			return ruleAddressChecksum
		}
	}
	return ""
}

// SolanaAddress reports whether s is base58 of exactly 32 bytes.
func SolanaAddress(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	b, err := base58.Decode(s)
	return err == nil && len(b) == 32
}

func evmShape(s string) bool {
	if len(s) != 42 || s[0] != '0' || s[1] != 'x' {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil
}

// EIP55Valid reports whether an EVM address of the 0x+40-hex shape passes
// EIP-55: an all-lower or all-upper hex part carries no checksum and passes;
// a mixed-case one passes only when every letter's case is the one the
// Keccak-256 of the lower-case hex part says.
func EIP55Valid(s string) bool {
	if !evmShape(s) {
		return false
	}
	h := s[2:]
	lower, upper := strings.ToLower(h), strings.ToUpper(h)
	if h == lower || h == upper {
		return true
	}
	return h == eip55(lower)
}

// eip55 returns the checksummed form of 40 lower-case hex digits.
func eip55(lower string) string {
	k := sha3.NewLegacyKeccak256()
	k.Write([]byte(lower))
	sum := k.Sum(nil)
	out := []byte(lower)
	for i, c := range out {
		if c < 'a' || c > 'f' {
			continue
		}
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// EIP55 returns the EIP-55 checksummed form of an EVM address ("" when s is
// not 0x + 40 hex digits).
func EIP55(s string) string {
	if !evmShape(s) {
		return ""
	}
	return "0x" + eip55(strings.ToLower(s[2:]))
}

func placeholder(f Family, s string) bool {
	switch f {
	case FamilyEVM:
		return strings.EqualFold(s, evmZeroAddress)
	case FamilySolana:
		return s == solanaSystemProgram
	}
	return false
}
