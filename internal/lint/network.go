package lint

import (
	"regexp"
	"strings"
	"sync"
)

// v1Networks maps the legacy network names of x402 v1 (the names v1 clients
// accept) to their CAIP-2 chain ids. docs/lint.md lists them.
// The list is the v1 client's own (x402's legacy TypeScript package,
// typescript/packages/legacy/x402/src/types/shared/network.ts, NetworkSchema
// and EvmNetworkToChainId).
var v1Networks = map[string]string{
	"abstract":           "eip155:2741",
	"abstract-testnet":   "eip155:11124",
	"story":              "eip155:1514",
	"educhain":           "eip155:41923",
	"skale-base-sepolia": "eip155:324705682",
	"base":               "eip155:8453",
	"base-sepolia":       "eip155:84532",
	"avalanche":          "eip155:43114",
	"avalanche-fuji":     "eip155:43113",
	"iotex":              "eip155:4689",
	"sei":                "eip155:1329",
	"sei-testnet":        "eip155:1328",
	"polygon":            "eip155:137",
	"polygon-amoy":       "eip155:80002",
	"peaq":               "eip155:3338",
	"solana":             "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
	"solana-devnet":      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
}

// NetworkCAIP2 maps a v1 legacy network name to its CAIP-2 chain id. ok is
// false for a name v1 clients do not know (CAIP-2 ids included: they are not
// v1 names). Callers comparing a v1 leg with a v2 leg (lint's legs_mismatch,
// preflight's terms hash) use it so both legs speak CAIP-2.
func NetworkCAIP2(v1Name string) (string, bool) {
	id, ok := v1Networks[v1Name]
	return id, ok
}

// caip2 is the CAIP-2 chain id grammar: a namespace of 3 to 8 lower-case
// letters, digits or hyphens, a colon, and a reference of 1 to 32 letters,
// digits, hyphens or underscores.
var caip2 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`) }) // compiled on first use, not at start-up

// IsCAIP2 reports whether s is a CAIP-2 chain id.
func IsCAIP2(s string) bool { return caip2().MatchString(s) }

// Family is a network family: how its addresses are written and which scheme
// rules apply.
type Family string

const (
	FamilyEVM     Family = "evm"    // CAIP-2 namespace eip155
	FamilySolana  Family = "solana" // CAIP-2 namespace solana
	FamilyUnknown Family = ""
)

// FamilyOf returns the family of a CAIP-2 chain id.
func FamilyOf(caip2ID string) Family {
	ns, _, _ := strings.Cut(caip2ID, ":")
	switch ns {
	case "eip155":
		return FamilyEVM
	case "solana":
		return FamilySolana
	}
	return FamilyUnknown
}
