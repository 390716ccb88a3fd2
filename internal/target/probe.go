package target

import (
	"context"
	"encoding/base64"
	"net/http"

	"github.com/exchangerebel/payability/internal/capture"
)

// ProbeUserAgent is carried by every probe request: probes identify themselves.
const ProbeUserAgent = "ExchangeRebel-RailProbe/1.0"

// Probe ids, in the published inventory order.
const (
	ProbeBaselineGet = "baseline_get"
	ProbeHead        = "head"
	ProbePostUnpaid  = "post_unpaid"
	ProbeDirect      = "direct"
	ProbeFacilitator = "facilitator"
	ProbeMissingMemo = "missing_memo"
	ProbeBogus       = "bogus"
)

// The published invalid payment material. Each is invalid by construction
// (the no-funds property): changing one is a criteria-version change.
const (
	// DirectTx fills the payment-transaction slot: not a signature at all.
	DirectTx = "PROBE-INVALID-NOT-A-REAL-TX-SIGNATURE-000000000000000000000000000000000000"
	// DirectMemo labels the direct probe's memo: bound to no challenge.
	DirectMemo = "probe-memo-not-bound-to-any-challenge"
	// FacilitatorPayload is the JSON the facilitator probe sends, base64
	// encoded; its signature corresponds to no key.
	FacilitatorPayload = `{"x402Version":2,"scheme":"exact","network":"solana","payload":{"signature":"PROBE-INVALID-SIGNATURE","authorization":{"from":"PROBE","to":"PROBE","value":0}}}`
	// BogusPayment is not a payment at all.
	BogusPayment = "bogus-not-a-payment-header"
)

// probeBody is the body of every POST probe: an empty JSON object.
const probeBody = "{}"

// Probe is one request of the published probe inventory.
type Probe struct {
	ID     string
	Method string
	Header map[string]string
	Body   []byte
}

// Inventory returns the published 7-probe inventory, in order. Each call
// returns fresh values, so a caller cannot alter what later calls send.
func Inventory() []Probe {
	post := func(id string, h map[string]string) Probe {
		h["Content-Type"] = "application/json"
		return Probe{ID: id, Method: http.MethodPost, Header: h, Body: []byte(probeBody)}
	}
	return []Probe{
		{ID: ProbeBaselineGet, Method: http.MethodGet},
		{ID: ProbeHead, Method: http.MethodHead},
		post(ProbePostUnpaid, map[string]string{}),
		post(ProbeDirect, map[string]string{"X-Payment-Tx": DirectTx, "X-Payment-Memo": DirectMemo}),
		post(ProbeFacilitator, map[string]string{
			"PAYMENT-SIGNATURE": base64.StdEncoding.EncodeToString([]byte(FacilitatorPayload)),
		}),
		post(ProbeMissingMemo, map[string]string{"X-Payment-Tx": DirectTx}),
		post(ProbeBogus, map[string]string{"X-PAYMENT": BogusPayment}),
	}
}

// RunProbes sends the inventory to url one request after another, in order,
// each with ProbeUserAgent and its own timeout, and returns exactly one
// capture per probe. When the baseline GET is not OK (failed, timeout or over
// cap) the other six are not sent and their captures say NotSent. The seven
// share a connection scope of their own, closed when they are done.
func (c *Client) RunProbes(ctx context.Context, url string) []capture.Capture {
	s := c.Session()
	defer s.Close()
	return s.RunProbes(ctx, url)
}

// RunProbes is Client.RunProbes on this scope's connections.
func (s *Session) RunProbes(ctx context.Context, url string) []capture.Capture {
	inv := Inventory()
	out := make([]capture.Capture, len(inv))
	for i, p := range inv {
		if i > 0 && out[0].Outcome != capture.OK {
			out[i] = capture.Capture{Outcome: capture.NotSent}
			continue
		}
		if p.Method == http.MethodHead && !s.isH2(url) {
			// The HEAD's HTTP/1 connection will not be reused (client.go):
			// the next probe's connection is dialled while it is out.
			s.spares.prepare(s.dial, dialAddr(url))
		}
		out[i] = s.c.do(ctx, Request{Method: p.Method, URL: url, Header: p.Header, Body: p.Body}, ProbeUserAgent, s)
	}
	return out
}
