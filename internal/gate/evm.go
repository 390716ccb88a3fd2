package gate

import "strings"

// EVMNetwork is a Base network our challenges may name beside Solana: USDC
// there, paid with the x402 exact scheme through a facilitator
// (specs/schemes/exact/scheme_exact_evm.md, EIP-3009).
type EVMNetwork struct {
	Name  string // the x402 v1 network name v1 clients take (lint.NetworkCAIP2's table: base, base-sepolia)
	CAIP2 string // the x402 v2 network id (CAIP-2, eip155:<chain id>)
	// USDC is Circle's USDC contract on that chain, EIP-55 checksummed, as
	// Circle publishes it ("USDC Contract Addresses",
	// developers.circle.com/stablecoins/usdc-contract-addresses); the same
	// addresses are the x402 reference packages' defaults for these networks.
	USDC string
	// TokenName and TokenVersion are the EIP-712 domain the USDC contract
	// declares (its name() and version()): an EIP-3009 client signs
	// transferWithAuthorization under them (extra.name, extra.version).
	TokenName, TokenVersion string
}

// The two EVM networks payability can sell on.
var (
	Base        = EVMNetwork{Name: "base", CAIP2: "eip155:8453", USDC: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", TokenName: "USD Coin", TokenVersion: "2"}
	BaseSepolia = EVMNetwork{Name: "base-sepolia", CAIP2: "eip155:84532", USDC: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", TokenName: "USDC", TokenVersion: "2"}
)

// EVMNetworkByID returns the EVM network of an --evm-network value: its
// CAIP-2 id or its v1 name.
func EVMNetworkByID(id string) (EVMNetwork, bool) {
	for _, n := range []EVMNetwork{Base, BaseSepolia} {
		if id == n.CAIP2 || id == n.Name {
			return n, true
		}
	}
	return EVMNetwork{}, false
}

// EVMTerms are the terms of the EVM entry of our challenges.
type EVMTerms struct {
	Network EVMNetwork
	PayTo   string // the EVM address USDC is transferred to (EIP-55)
}

// TransferMethodEIP3009 is the one asset transfer method the EVM entry
// takes (scheme_exact_evm.md, section 1): USDC's own
// transferWithAuthorization.
const TransferMethodEIP3009 = "eip3009"

// SameEVMAddress reports whether two EVM addresses are the same account:
// hex is case-insensitive, EIP-55 case is only a checksum.
func SameEVMAddress(a, b string) bool {
	return ValidEVMAddress(a) && strings.EqualFold(a, b)
}

// ValidEVMAddress reports whether s has the form of an EVM address: 0x and
// 40 hex digits (any case).
func ValidEVMAddress(s string) bool {
	return len(s) == 42 && isHex(s, 2)
}

// isHex reports whether s from index i on is non-empty hex and s starts
// with 0x.
func isHex(s string, i int) bool {
	if len(s) <= i || !strings.HasPrefix(s, "0x") {
		return false
	}
	for _, c := range s[i:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// ValidEVMHex reports whether s is 0x and an even number of hex digits
// encoding from min to max bytes.
func ValidEVMHex(s string, min, max int) bool {
	n := len(s) - 2
	return isHex(s, 2) && n%2 == 0 && n/2 >= min && n/2 <= max
}
