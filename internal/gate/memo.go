// Package gate is the seller side of x402 for payability's own paid routes:
// our challenges with self-verifying memos, the payment rails behind small
// interfaces, replay refusal, the verified-marker resume and the free tier.
// It decides; the HTTP server only renders what it decides.
package gate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"io"
	"strings"
	"time"
)

// MemoLifetime is how long an issued memo stays valid.
const MemoLifetime = 15 * time.Minute

// memoPrefix makes every memo classify as prefixed-opaque under the memo op's
// format rule (a prefix of at least two letters, a separator, then opaque).
const memoPrefix = "pv-"

const (
	memoVersion  = 1
	memoNonceLen = 12
	memoMACLen   = 16
	// version, op, expiry (unix seconds), bound flag, nonce
	memoPayloadLen = 1 + 1 + 8 + 1 + memoNonceLen
)

var opCodes = map[string]byte{"check": 1, "memo": 2, "probe": 3, "preflight": 4, "lint": 5}

// Memos issues and verifies self-verifying memos: an HMAC under the memo key
// over op, expiry, nonce and, when the challenge answered a request that named
// a URL, that URL. Verifying needs no storage, so issuing a challenge writes
// nothing.
type Memos struct {
	Key  []byte
	Now  func() time.Time
	Rand io.Reader
}

func (m Memos) mac(payload []byte, url string) []byte {
	h := hmac.New(sha256.New, m.Key)
	h.Write(payload)
	if payload[10] == 1 {
		h.Write([]byte(url))
	}
	return h.Sum(nil)[:memoMACLen]
}

// Issue returns a fresh memo for op, bound to url when url is not empty.
func (m Memos) Issue(op, url string) (string, error) {
	payload := make([]byte, memoPayloadLen)
	payload[0] = memoVersion
	payload[1] = opCodes[op]
	binary.BigEndian.PutUint64(payload[2:10], uint64(m.Now().Add(MemoLifetime).Unix()))
	if url != "" {
		payload[10] = 1
	}
	if _, err := io.ReadFull(m.Rand, payload[11:]); err != nil {
		return "", err
	}
	raw := append(payload, m.mac(payload, url)...)
	return memoPrefix + base64.RawURLEncoding.EncodeToString(raw), nil
}

// MemoInfo is what a verified memo says.
type MemoInfo struct {
	Op      string
	Expires time.Time
	Bound   bool
}

// Verify checks that memo was issued by us, for op, is unexpired at now, and,
// when it is bound, that it was bound to url. It returns a refusal code.
func (m Memos) Verify(memo, op, url string) (MemoInfo, Code) {
	rest, ok := strings.CutPrefix(memo, memoPrefix)
	if !ok {
		return MemoInfo{}, CodeMemoInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) != memoPayloadLen+memoMACLen || raw[0] != memoVersion {
		return MemoInfo{}, CodeMemoInvalid
	}
	payload, mac := raw[:memoPayloadLen], raw[memoPayloadLen:]
	// The MAC covers the bound URL: a memo bound to another URL fails here,
	// exactly as a forged one does (nothing is stored to tell them apart).
	if !hmac.Equal(mac, m.mac(payload, url)) {
		return MemoInfo{}, CodeMemoInvalid
	}
	info := MemoInfo{
		Expires: time.Unix(int64(binary.BigEndian.Uint64(payload[2:10])), 0).UTC(),
		Bound:   payload[10] == 1,
	}
	for name, code := range opCodes {
		if code == payload[1] {
			info.Op = name
		}
	}
	switch {
	case info.Op != op:
		return info, CodeMemoWrongOp
	case !m.Now().Before(info.Expires):
		return info, CodeMemoExpired
	}
	return info, ""
}

// Digest is the keyed digest under which a memo is recorded (the store never
// holds a memo value): HMAC-SHA256 of the memo under the memo key, in hex.
func (m Memos) Digest(memo string) string {
	h := hmac.New(sha256.New, m.Key)
	h.Write([]byte("payability/memo-digest/v1\x00"))
	h.Write([]byte(memo))
	return hex.EncodeToString(h.Sum(nil))
}
