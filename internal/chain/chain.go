// Package chain makes lint's opt-in chain-readiness look-ups: JSON-RPC calls
// to a Solana node (does the asset mint and the payee's associated token
// account exist?) and to an EVM node (what EIP-712 domain does the asset
// contract declare?). It is I/O only: it turns answers into observations
// (lint.ChainObservation) and lint grades them.
//
// Every call goes through one guarded client: the address guard of target
// fetches (loopback and private addresses refused unless AllowPrivate), a
// 5 s timeout per call, a capped answer, no redirects, no proxy. Errors are
// closed-form: the RPC URL (which often carries an API key) and the node's
// bytes never reach a message.
package chain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
)

// Limits of every call.
const (
	CallTimeout = 5 * time.Second
	MaxAnswer   = 1 << 20 // bytes of one JSON-RPC answer
)

// Options configure a Client. An empty RPC URL disables that family.
type Options struct {
	SolanaRPC    string
	EVMRPC       string
	AllowPrivate bool
	UserAgent    string
}

// Client makes the look-ups. It is safe for concurrent use.
type Client struct {
	solana, evm string
	hc          *http.Client
	userAgent   string
	budget      time.Duration // Budget when 0 (tests set it)
}

// ErrRPCURL is New's refusal of an RPC URL that is not absolute http(s).
var ErrRPCURL = errors.New("the RPC URL must be an absolute http or https URL")

// New builds a Client.
func New(o Options) (*Client, error) {
	for _, u := range []string{o.SolanaRPC, o.EVMRPC} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, ErrRPCURL
		}
	}
	dialer := &net.Dialer{Timeout: CallTimeout}
	if !o.AllowPrivate {
		dialer.Control = guard
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSHandshakeTimeout: CallTimeout,
		DisableKeepAlives:   true,
	}
	if o.UserAgent == "" {
		o.UserAgent = target.DefaultUserAgent
	}
	return &Client{
		solana: o.SolanaRPC, evm: o.EVMRPC, userAgent: o.UserAgent,
		hc: &http.Client{
			Transport:     tr,
			Timeout:       CallTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

var errGuard = errors.New("chain: destination address refused by the address guard")

// guard is the dial-time address check of target fetches, on the exact
// address about to be connected.
func guard(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return errGuard
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !target.AddressAllowed(ap.Addr()) {
		return errGuard
	}
	return nil
}

// Failure classes of a call.
var (
	errTransport = errors.New("chain: no answer")        // dial, timeout, non-2xx, over cap
	errMalformed = errors.New("chain: malformed answer") // not the JSON-RPC shape
	errRPC       = errors.New("chain: RPC error")        // the node answered with an error object
)

// call sends one JSON-RPC request and decodes its result into out.
func (c *Client) call(ctx context.Context, endpoint, method string, params any, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return errMalformed
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return errTransport
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return errTransport
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errTransport
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil || len(data) > MaxAnswer {
		return errTransport
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &env) != nil {
		return errMalformed
	}
	if env.Error != nil {
		return errRPC
	}
	if env.Result == nil {
		return errMalformed
	}
	if json.Unmarshal(env.Result, out) != nil {
		return errMalformed
	}
	return nil
}

// Bounds of one lint's look-ups (docs/lint.md, "Chain readiness"): the
// seller's challenge decides how many entries there are, never how much
// work a lint does.
const (
	// MaxLookups is the most distinct (family, network, asset, payTo)
	// look-ups one Observe makes; the entries of the others are Skipped.
	MaxLookups = 16
	// MaxParallel is how many look-ups run at once.
	MaxParallel = 4
	// Budget bounds one Observe overall; a look-up it cuts short is
	// Unavailable.
	Budget = 20 * time.Second
)

// Observe makes the look-ups of qs, once per distinct (family, network,
// payTo, asset), at most MaxLookups of them, MaxParallel at a time, all
// within Budget, and returns one observation per query in order. A family
// without an RPC URL is not observed.
func (c *Client) Observe(ctx context.Context, qs []lint.ChainQuery) lint.ChainFacts {
	type k struct {
		f                     lint.Family
		network, payTo, asset string
	}
	budget := c.budget
	if budget <= 0 {
		budget = Budget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	// The distinct look-ups, in the order of their first query.
	slot := map[k]int{}
	var todo []lint.ChainQuery
	for _, q := range qs {
		if !c.serves(q.Family) {
			continue
		}
		key := k{q.Family, q.Network, q.PayTo, q.Asset}
		if _, ok := slot[key]; !ok {
			slot[key] = len(todo)
			todo = append(todo, q)
		}
	}
	made := todo[:min(len(todo), MaxLookups)]
	obs := make([]lint.ChainObservation, len(made))
	sem := make(chan struct{}, MaxParallel)
	var wg sync.WaitGroup
	for i, q := range made {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if q.Family == lint.FamilySolana {
				obs[i] = c.solanaReadiness(ctx, q)
			} else {
				obs[i] = c.evmDomain(ctx, q)
			}
		})
	}
	wg.Wait()

	var facts lint.ChainFacts
	for _, q := range qs {
		if !c.serves(q.Family) {
			continue
		}
		i := slot[k{q.Family, q.Network, q.PayTo, q.Asset}]
		o := lint.ChainObservation{Skipped: true}
		if i < len(obs) {
			o = obs[i]
		}
		o.Leg, o.Entry, o.Family = q.Leg, q.Entry, q.Family
		facts.Observations = append(facts.Observations, o)
	}
	return facts
}

// serves reports whether the client has a node for family.
func (c *Client) serves(f lint.Family) bool {
	switch f {
	case lint.FamilySolana:
		return c.solana != ""
	case lint.FamilyEVM:
		return c.evm != ""
	}
	return false
}
