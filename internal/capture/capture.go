// Package capture holds what one request to a target observed. It is the only
// value that crosses from fetching (internal/target) into grading
// (internal/verdict): fetching produces it, graders read it, nothing stores it.
package capture

import "net/textproto"

// Outcome says how one request to a target ended.
type Outcome string

const (
	// OK: a response arrived and its whole body fits within the body cap.
	OK Outcome = "ok"
	// Failed: no response (refused, reset, DNS, guard refusal, bad response).
	Failed Outcome = "failed"
	// Timeout: the whole exchange did not finish within the fetch timeout.
	Timeout Outcome = "timeout"
	// OverCap: a response arrived but its body is longer than the body cap.
	OverCap Outcome = "over_cap"
	// NotSent: the request was never sent (the probe stopped after a failed baseline).
	NotSent Outcome = "not_sent"
)

// FetchError names, from a closed set, why a request got no usable response.
// It sits beside the criteria's own reasons (fetch_failed, timeout) and never
// changes a state: it only tells the user what failed. It is "" when a
// response arrived, and for a timeout (the Outcome already says it).
type FetchError string

const (
	// AddressRefused: the address guard refused every address of the host.
	AddressRefused FetchError = "address_refused"
	// DNSFailed: the host name did not resolve.
	DNSFailed FetchError = "dns_failed"
	// ConnectRefused: the host refused the TCP connection (or was unreachable).
	ConnectRefused FetchError = "connect_refused"
	// TLSFailed: the TLS handshake failed (certificate, version, alert).
	TLSFailed FetchError = "tls_failed"
	// Reset: the connection was reset or closed before a whole response arrived.
	Reset FetchError = "reset"
	// ProtocolError: the peer answered, but not with a valid HTTP response
	// (malformed status line or headers, headers over the cap, bad framing),
	// or the request was one this client will not send.
	ProtocolError FetchError = "protocol_error"
)

// BodyCapBytes is the published response-body cap of every fetch (65,536 bytes).
const BodyCapBytes = 65536

// Header maps canonical MIME header keys to their values, as net/http does.
type Header map[string][]string

// Get returns the first value of the named header, and whether it was present.
func (h Header) Get(name string) (string, bool) {
	v := h[textproto.CanonicalMIMEHeaderKey(name)]
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// Capture is what one request observed. Body holds the body as received on the
// wire (never decompressed), at most BodyCapBytes long for an OK capture.
type Capture struct {
	Outcome Outcome
	Status  int // 0 when no response arrived
	Header  Header
	Body    []byte
	// Error is why a Failed capture failed ("" otherwise); see FetchError.
	Error FetchError
}

// Responded reports whether a status line was received.
func (c Capture) Responded() bool {
	return (c.Outcome == OK || c.Outcome == OverCap) && c.Status != 0
}

// Usable reports whether the capture is a complete response within the cap:
// the fetch neither failed nor timed out, and the body is not over the cap.
// A body longer than the cap is treated as over cap even when the outcome says
// OK, so a grader never trusts a producer that forgot to apply the cap.
func (c Capture) Usable() bool {
	return c.Outcome == OK && c.Status != 0 && len(c.Body) <= BodyCapBytes
}

// OverCapBody reports whether the response body exceeded the cap.
func (c Capture) OverCapBody() bool {
	return c.Outcome == OverCap || (c.Outcome == OK && len(c.Body) > BodyCapBytes)
}
