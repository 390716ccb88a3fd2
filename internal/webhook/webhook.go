// Package webhook is the monitor's signed events: the outcome_changed event,
// its HMAC-SHA256 signature header and the check a receiver makes. It does
// no I/O: delivery is a River job in internal/schedule.
//
// The header is X-Payability-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256
// of "<t>.<body>" keyed by the shared secret>. A receiver recomputes it over
// the raw body and rejects a t more than Tolerance away from its clock.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	SignatureHeader = "X-Payability-Signature"
	EventIDHeader   = "X-Payability-Event-Id"
)

// Tolerance is how far a signature's t may be from the receiver's clock.
const Tolerance = 300 * time.Second

// TypeOutcomeChanged is the one event type.
const TypeOutcomeChanged = "outcome_changed"

// Event is what a receiver is told when an op's outcome changes.
type Event struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Endpoint string   `json:"endpoint"`
	Op       string   `json:"op"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Reasons  []string `json:"reasons"`
	At       string   `json:"at"`
}

// EventID is the id of the change recorded in one endpoint's op's slot: the
// same change always has the same id, so a receiver (and our delivery jobs)
// can drop a repeat.
func EventID(endpoint, op string, slot int64) string {
	sum := sha256.Sum256([]byte(endpoint + "\x00" + op + "\x00" + strconv.FormatInt(slot, 10)))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// Body is the event's JSON, as delivered and signed.
func (e Event) Body() []byte {
	if e.Reasons == nil {
		e.Reasons = []string{}
	}
	b, _ := json.Marshal(e) // strings and a slice of strings: cannot fail
	return b
}

// Sign is the signature header of body at t.
func Sign(secret, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Why a signature is refused: a closed set.
var (
	ErrMalformed = errors.New("webhook: malformed signature header")
	ErrStale     = errors.New("webhook: signature timestamp outside the tolerance")
	ErrMismatch  = errors.New("webhook: signature does not match")
)

// maxHeader bounds the header a receiver parses.
const maxHeader = 4096

// Verify checks header against body and secret at now: nil when one v1
// matches and t is within Tolerance of now (older or newer). The header is
// t=<digits> once and v1=<64 hex> once or more, comma-separated; other
// schemes are ignored, as a later scheme may be added beside v1.
func Verify(secret, body []byte, header string, now time.Time) error {
	if len(header) > maxHeader {
		return ErrMalformed
	}
	var (
		ts   string
		sigs []string
	)
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformed
		}
		switch k {
		case "t":
			if ts != "" || !digits(v) || len(v) > 18 {
				return ErrMalformed
			}
			ts = v
		case "v1":
			if len(v) != 64 || !hexLower(v) {
				return ErrMalformed
			}
			sigs = append(sigs, v)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return ErrMalformed
	}
	sec, _ := strconv.ParseInt(ts, 10, 64)
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return ErrStale
	}
	want := []byte(mac(secret, ts, body))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return ErrMismatch
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func hexLower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
