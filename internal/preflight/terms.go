package preflight

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/report"
)

// networkCAIP2 is the CAIP-2 id of an entry's network: a v2 entry states a
// CAIP-2 id (anything else has none); a v1 entry states a legacy name (mapped)
// or, as some sellers do, a CAIP-2 id already.
func networkCAIP2(version int, network string) (string, bool) {
	if ValidCAIP2(network) {
		return network, true
	}
	if version == 1 {
		return lint.NetworkCAIP2(network)
	}
	return "", false
}

// Terms are the members terms_sha256 commits to. They hold fetched values:
// only their digest leaves the package.
type Terms struct {
	URL               string      `json:"url"`
	Scheme            string      `json:"scheme"`
	Network           string      `json:"network"`
	Asset             string      `json:"asset"`
	PayTo             string      `json:"payTo"`
	Amount            string      `json:"amount"`
	MaxTimeoutSeconds json.Number `json:"maxTimeoutSeconds"`
}

// TermsOf reads an entry's terms. ok is false when a member is missing or of
// the wrong type, or the network has no CAIP-2 id: then no hash is made.
func TermsOf(e Entry) (Terms, bool) {
	t := Terms{Scheme: e.Scheme, Network: e.CAIP2, Asset: str(e.entry, "asset"), PayTo: str(e.entry, "payTo"), Amount: e.amount()}
	if e.X402Version == 1 {
		t.URL = str(e.entry, "resource")
	} else if r, ok := e.resource.(map[string]any); ok {
		t.URL = str(r, "url")
	}
	n, ok := jsonNumber(e.entry, "maxTimeoutSeconds")
	if !ok || t.URL == "" || t.Scheme == "" || t.Network == "" || t.Asset == "" || t.PayTo == "" || t.Amount == "" {
		return Terms{}, false
	}
	t.MaxTimeoutSeconds = n
	return t, true
}

// Hash is terms_sha256: SHA-256 hex of the RFC 8785 form of the terms. ok is
// false when maxTimeoutSeconds is not a safe integer.
func (t Terms) Hash() (string, bool) {
	canon, err := report.Canonical(t)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), true
}

// EntryHash is one entry's terms hash, as terms-hash prints it.
type EntryHash struct {
	Leg         lint.Leg `json:"leg"`
	Index       int      `json:"index"`
	X402Version int      `json:"x402_version"`
	Scheme      string   `json:"scheme"`
	Network     string   `json:"network"`
	// TermsSHA256 is null when the entry's terms are incomplete.
	TermsSHA256 *string `json:"terms_sha256"`
}

// HashEntries hashes every entry a standard client can read.
func HashEntries(ch lint.Challenge) []EntryHash {
	out := []EntryHash{}
	for _, e := range candidates(ch) {
		h := EntryHash{Leg: e.Leg, Index: e.Index, X402Version: e.X402Version, Scheme: safeIdent(e.Scheme), Network: safeIdent(e.Network)}
		if t, ok := TermsOf(e); ok {
			if s, ok := t.Hash(); ok {
				h.TermsSHA256 = &s
			}
		}
		out = append(out, h)
	}
	return out
}
