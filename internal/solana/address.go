package solana

import "github.com/mr-tron/base58"

// ValidAddress reports whether s is a base58 Solana address (a 32-byte public key).
func ValidAddress(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	b, err := base58.Decode(s)
	return err == nil && len(b) == 32
}
