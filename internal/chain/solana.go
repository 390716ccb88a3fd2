package chain

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"

	"github.com/exchangerebel/payability/internal/lint"
)

// Token account layouts (SPL Token; Token-2022 extends them and marks the
// account type at byte 165).
const (
	mintLen          = 82
	tokenAccountLen  = 165
	accountTypeMint  = 1
	accountTypeToken = 2
)

type accountInfo struct {
	Value *struct {
		Owner string   `json:"owner"`
		Data  []string `json:"data"` // [base64, "base64"]
	} `json:"value"`
}

// account fetches one account: exists false when the node has none.
func (c *Client) account(ctx context.Context, addr string) (owner string, data []byte, exists bool, err error) {
	var ai accountInfo
	params := []any{addr, map[string]any{"encoding": "base64", "commitment": "confirmed"}}
	if err := c.call(ctx, c.solana, "getAccountInfo", params, &ai); err != nil {
		return "", nil, false, err
	}
	if ai.Value == nil {
		return "", nil, false, nil
	}
	if len(ai.Value.Data) != 2 || ai.Value.Data[1] != "base64" {
		return "", nil, false, errMalformed
	}
	b, err := base64.StdEncoding.DecodeString(ai.Value.Data[0])
	if err != nil {
		return "", nil, false, errMalformed
	}
	return ai.Value.Owner, b, true, nil
}

// genesisNetwork is the CAIP-2 id of the chain the node serves: "solana:"
// and the first 32 characters of its genesis hash.
func (c *Client) genesisNetwork(ctx context.Context) (string, error) {
	var h string
	if err := c.call(ctx, c.solana, "getGenesisHash", []any{}, &h); err != nil {
		return "", err
	}
	if len(h) < 32 {
		return "", errMalformed
	}
	return "solana:" + h[:32], nil
}

// solanaReadiness: is asset a mint of Token or Token-2022, and does payTo's
// associated token account under that program exist as a token account of
// the mint owned by payTo?
func (c *Client) solanaReadiness(ctx context.Context, q lint.ChainQuery) lint.ChainObservation {
	unavailable := lint.ChainObservation{Unavailable: true}
	network, err := c.genesisNetwork(ctx)
	if err != nil {
		return unavailable
	}
	if network != q.Network {
		return lint.ChainObservation{OtherNetwork: true}
	}
	mint, ok1 := key(q.Asset)
	owner, ok2 := key(q.PayTo)
	if !ok1 || !ok2 {
		return unavailable
	}
	prog, data, exists, err := c.account(ctx, q.Asset)
	if err != nil {
		return unavailable
	}
	var o lint.ChainObservation
	if !exists || !isMint(prog, data) {
		return o
	}
	o.AssetIsMint = true
	progKey, _ := key(prog)
	ata, err := AssociatedTokenAddress(owner, progKey, mint)
	if err != nil {
		return unavailable
	}
	aprog, adata, exists, err := c.account(ctx, Base58(ata))
	switch {
	case errors.Is(err, errTransport), errors.Is(err, errMalformed), errors.Is(err, errRPC):
		return unavailable
	case !exists:
		return o
	}
	o.ATAExists = true
	o.ATAIsTokenAccount = aprog == prog && isTokenAccount(prog, adata, mint, owner)
	return o
}

func isMint(prog string, data []byte) bool {
	switch prog {
	case TokenProgram:
		return len(data) == mintLen
	case Token2022Program:
		return len(data) == mintLen || (len(data) > tokenAccountLen && data[tokenAccountLen] == accountTypeMint)
	}
	return false
}

func isTokenAccount(prog string, data []byte, mint, owner [32]byte) bool {
	if len(data) < tokenAccountLen || !bytes.Equal(data[0:32], mint[:]) || !bytes.Equal(data[32:64], owner[:]) {
		return false
	}
	switch prog {
	case TokenProgram:
		return len(data) == tokenAccountLen
	case Token2022Program:
		return len(data) == tokenAccountLen || data[tokenAccountLen] == accountTypeToken
	}
	return false
}
