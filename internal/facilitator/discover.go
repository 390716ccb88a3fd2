package facilitator

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/solana"
)

// Support is what a facilitator's GET /supported says about our network.
type Support struct {
	// FeePayer is the facilitator's Solana fee payer: a Solana exact client
	// needs it in accepts[0].extra.feePayer to build its transaction.
	FeePayer string
	// Versions are the x402 versions it settles exact on our network in.
	Versions map[int]bool
}

// ErrUnsupported: the facilitator does not settle exact on our network.
var ErrUnsupported = errors.New("facilitator: the facilitator does not support the exact scheme on this network")

// ErrNoFeePayer: it does, but names no Solana fee payer to put in our challenge.
var ErrNoFeePayer = errors.New("facilitator: the facilitator names no Solana feePayer for this network")

// DiscoverEVM reads GET /supported for the EVM entry's network: the x402
// versions the facilitator settles exact on it in (a kind may name it
// either way, v1 name or CAIP-2). No fee payer: on EVM the facilitator
// pays the gas from its own account, which the client never names.
func DiscoverEVM(ctx context.Context, c *Client, network gate.EVMNetwork) (map[int]bool, error) {
	res, err := c.Supported(ctx)
	if err != nil {
		return nil, err
	}
	versions := map[int]bool{}
	for _, k := range res.Kinds {
		if k.Scheme == SchemeExact && (k.Network == network.CAIP2 || k.Network == network.Name) &&
			(k.X402Version == 1 || k.X402Version == 2) {
			versions[k.X402Version] = true
		}
	}
	if len(versions) == 0 {
		return nil, ErrUnsupported
	}
	return versions, nil
}

// Discover reads GET /supported once, at start: which x402 versions settle
// exact on network, and the fee payer (from a v2 kind first, then v1). A
// kind may name the network either way (v1 name or CAIP-2).
func Discover(ctx context.Context, c *Client, network gate.Network) (Support, error) {
	res, err := c.Supported(ctx)
	if err != nil {
		return Support{}, err
	}
	s := Support{Versions: map[int]bool{}}
	kinds := slices.Clone(res.Kinds)
	slices.SortStableFunc(kinds, func(a, b SupportedKind) int { return b.X402Version - a.X402Version })
	for _, k := range kinds {
		if k.Scheme != SchemeExact || (k.Network != network.CAIP2 && k.Network != network.Name) ||
			(k.X402Version != 1 && k.X402Version != 2) {
			continue
		}
		s.Versions[k.X402Version] = true
		var extra struct {
			FeePayer string `json:"feePayer"`
		}
		if len(k.Extra) > 0 && json.Unmarshal(k.Extra, &extra) == nil && s.FeePayer == "" && solana.ValidAddress(extra.FeePayer) {
			s.FeePayer = extra.FeePayer
		}
	}
	switch {
	case len(s.Versions) == 0:
		return Support{}, ErrUnsupported
	case s.FeePayer == "":
		return Support{}, ErrNoFeePayer
	}
	return s, nil
}
