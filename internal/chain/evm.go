package chain

import (
	"context"
	"encoding/hex"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/exchangerebel/payability/internal/lint"
)

// ERC-20 metadata selectors: name() and version() (the EIP-712 domain of
// EIP-3009 tokens such as USDC).
const (
	selectorName    = "0x06fdde03"
	selectorVersion = "0x54fd4d50"
)

// maxDomainString bounds a decoded name or version.
const maxDomainString = 256

// evmDomain reads name() and version() of the asset, on the node's chain.
func (c *Client) evmDomain(ctx context.Context, q lint.ChainQuery) lint.ChainObservation {
	unavailable := lint.ChainObservation{Unavailable: true}
	var chainID string
	if err := c.call(ctx, c.evm, "eth_chainId", []any{}, &chainID); err != nil {
		return unavailable
	}
	id, ok := new(big.Int).SetString(strings.TrimPrefix(chainID, "0x"), 16)
	if !ok || !strings.HasPrefix(chainID, "0x") {
		return unavailable
	}
	if "eip155:"+id.String() != q.Network {
		return lint.ChainObservation{OtherNetwork: true}
	}
	var o lint.ChainObservation
	for _, f := range []struct {
		sel  string
		val  *string
		read *bool
	}{{selectorName, &o.Name, &o.NameRead}, {selectorVersion, &o.Version, &o.VersionRead}} {
		var res string
		err := c.call(ctx, c.evm, "eth_call", []any{map[string]string{"to": q.Asset, "data": f.sel}, "latest"}, &res)
		switch err {
		case nil:
			*f.val, *f.read = abiString(res)
		case errRPC:
			// A revert (the contract has no such function): not read.
		default:
			return unavailable
		}
	}
	return o
}

// abiString decodes the ABI encoding of one dynamic string return value:
// a 32-byte offset, at it a 32-byte length, then the bytes.
func abiString(hexData string) (string, bool) {
	b, err := hex.DecodeString(strings.TrimPrefix(hexData, "0x"))
	if err != nil || len(b) < 64 {
		return "", false
	}
	off, ok := word(b, 0)
	if !ok || off+32 > uint64(len(b)) {
		return "", false
	}
	n, ok := word(b, off)
	if !ok || n > maxDomainString || off+32+n > uint64(len(b)) {
		return "", false
	}
	s := string(b[off+32 : off+32+n])
	if !utf8.ValidString(s) {
		return "", false
	}
	return s, true
}

// word reads the 32-byte big-endian word at off as a small integer.
func word(b []byte, off uint64) (uint64, bool) {
	if off+32 > uint64(len(b)) || off > uint64(len(b)) {
		return 0, false
	}
	w := b[off : off+32]
	for _, x := range w[:24] {
		if x != 0 {
			return 0, false
		}
	}
	var v uint64
	for _, x := range w[24:] {
		v = v<<8 | uint64(x)
	}
	return v, true
}
