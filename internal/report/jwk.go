package report

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

	"github.com/gowebpki/jcs"
)

// Key is a signing key and its id.
type Key struct {
	Kid     string // RFC 7638 thumbprint of the public key
	Private ed25519.PrivateKey
}

// PublicKey is a verifying key and its id.
type PublicKey struct {
	Kid string
	Key ed25519.PublicKey
}

// KeySet holds the keys a verifier accepts: the current signing key and the
// retired ones, kept so that reports signed before a rotation still verify.
type KeySet struct {
	Current PublicKey   // zero in a set that only verifies old reports
	Retired []PublicKey // in the order they were loaded
}

// GenerateKey makes a key from 32 bytes of rand, the Ed25519 seed. rand is
// read directly (not through crypto/ed25519), so an injected reader decides
// the key in tests.
func GenerateKey(rand io.Reader) (Key, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(rand, seed); err != nil {
		return Key{}, fmt.Errorf("report: reading key seed: %w", err)
	}
	return NewKey(ed25519.NewKeyFromSeed(seed))
}

// NewKey names priv with its kid.
func NewKey(priv ed25519.PrivateKey) (Key, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return Key{}, ErrBadKey
	}
	pub, err := NewPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return Key{}, err
	}
	return Key{Kid: pub.Kid, Private: priv}, nil
}

// NewPublicKey names pub with its kid.
func NewPublicKey(pub ed25519.PublicKey) (PublicKey, error) {
	kid, err := Thumbprint(pub)
	if err != nil {
		return PublicKey{}, err
	}
	return PublicKey{Kid: kid, Key: pub}, nil
}

// Public is the verifying half of k.
func (k Key) Public() PublicKey {
	if len(k.Private) != ed25519.PrivateKeySize {
		return PublicKey{}
	}
	return PublicKey{Kid: k.Kid, Key: k.Private.Public().(ed25519.PublicKey)}
}

// check refuses a key that would make Sign panic or name the wrong key.
func (k Key) check() error {
	if len(k.Private) != ed25519.PrivateKeySize {
		return ErrBadKey
	}
	kid, err := Thumbprint(k.Private.Public().(ed25519.PublicKey))
	if err != nil || kid != k.Kid {
		return ErrBadKey
	}
	return nil
}

// Thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url without
// padding) of pub as an RFC 8037 OKP key: the hash of
// {"crv":"Ed25519","kty":"OKP","x":…}, members in that order, no spaces.
func Thumbprint(pub ed25519.PublicKey) (string, error) {
	if len(pub) != ed25519.PublicKeySize {
		return "", ErrBadKey
	}
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// NewKeySet is the set that verifies current's signatures and the retired keys'.
func NewKeySet(current Key, retired ...PublicKey) KeySet {
	return KeySet{Current: current.Public(), Retired: retired}
}

// Keys lists the set, current key first.
func (s KeySet) Keys() []PublicKey {
	keys := make([]PublicKey, 0, 1+len(s.Retired))
	if s.Current.Kid != "" {
		keys = append(keys, s.Current)
	}
	return append(keys, s.Retired...)
}

// Lookup finds the verifying key named kid.
func (s KeySet) Lookup(kid string) (ed25519.PublicKey, bool) {
	if kid == "" {
		return nil, false
	}
	for _, k := range s.Keys() {
		if k.Kid == kid && len(k.Key) == ed25519.PublicKeySize {
			return k.Key, true
		}
	}
	return nil, false
}

// jwk is one RFC 8037 public key as published; the field order is the order
// written.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// MarshalJWKS writes the set as a JWK Set (RFC 7517 §5) of RFC 8037 OKP
// Ed25519 keys, current key first.
func MarshalJWKS(s KeySet) ([]byte, error) {
	keys := s.Keys()
	if len(keys) == 0 {
		return nil, ErrBadKey
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(keys))}
	for _, k := range keys {
		kid, err := Thumbprint(k.Key)
		if err != nil || kid != k.Kid {
			return nil, ErrBadKey
		}
		set.Keys = append(set.Keys, jwk{
			Kty: "OKP", Crv: "Ed25519",
			X:   base64.RawURLEncoding.EncodeToString(k.Key),
			Kid: kid, Use: "sig", Alg: "EdDSA",
		})
	}
	return json.Marshal(set)
}

// ErrBadJWKS: a key set document that ParseJWKS refuses; the wrapped
// detail is a fixed sentence, never a byte of the document.
var ErrBadJWKS = &Error{"bad_jwks"}

// ParseJWKS reads a JWK Set strictly: only the member "keys", a non-empty
// array of OKP Ed25519 public keys with exactly the members kty, crv, x, kid
// and optionally use ("sig") and alg ("EdDSA"); every kid must be the key's
// thumbprint, no kid twice, no private part. The first key becomes Current.
func ParseJWKS(data []byte) (KeySet, error) {
	bad := func(detail string) (KeySet, error) {
		return KeySet{}, fmt.Errorf("%w: %s", ErrBadJWKS, detail)
	}
	// jcs rejects duplicate member names and invalid UTF-8, which
	// encoding/json would let through.
	if _, err := jcs.Transform(data); err != nil {
		return bad("not valid JSON")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return bad("not a JSON object")
	}
	if len(top) != 1 {
		return bad("members other than keys")
	}
	var rawKeys []json.RawMessage
	if err := json.Unmarshal(top["keys"], &rawKeys); err != nil || rawKeys == nil {
		return bad("keys is not an array")
	}
	if len(rawKeys) == 0 {
		return bad("no keys")
	}
	var set KeySet
	seen := make(map[string]bool, len(rawKeys))
	for i, raw := range rawKeys {
		k, detail := parseJWK(raw)
		if detail != "" {
			return bad(detail)
		}
		if seen[k.Kid] {
			return bad("a kid appears twice")
		}
		seen[k.Kid] = true
		if i == 0 {
			set.Current = k
		} else {
			set.Retired = append(set.Retired, k)
		}
	}
	return set, nil
}

// parseJWK returns the key, or a fixed sentence saying why not.
func parseJWK(raw json.RawMessage) (PublicKey, string) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return PublicKey{}, "a key is not a JSON object"
	}
	if _, ok := members["d"]; ok {
		return PublicKey{}, "a key carries private key material"
	}
	var k jwk
	fields := map[string]*string{"kty": &k.Kty, "crv": &k.Crv, "x": &k.X, "kid": &k.Kid, "use": &k.Use, "alg": &k.Alg}
	for name, v := range members {
		dst, ok := fields[name]
		if !ok {
			return PublicKey{}, "a key has an unknown member"
		}
		var s string
		if json.Unmarshal(v, &s) != nil || !isJSONString(v) {
			return PublicKey{}, "a key member is not a string"
		}
		*dst = s
	}
	switch {
	case k.Kty != "OKP":
		return PublicKey{}, "kty is not OKP"
	case k.Crv != "Ed25519":
		return PublicKey{}, "crv is not Ed25519"
	case k.Use != "" && k.Use != "sig":
		return PublicKey{}, "use is not sig"
	case k.Alg != "" && k.Alg != "EdDSA":
		return PublicKey{}, "alg is not EdDSA"
	}
	if _, ok := members["use"]; ok && k.Use == "" {
		return PublicKey{}, "use is not sig"
	}
	if _, ok := members["alg"]; ok && k.Alg == "" {
		return PublicKey{}, "alg is not EdDSA"
	}
	x, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return PublicKey{}, "x is not a base64url Ed25519 public key"
	}
	pub, err := NewPublicKey(ed25519.PublicKey(x))
	if err != nil {
		return PublicKey{}, "x is not a base64url Ed25519 public key"
	}
	if k.Kid != pub.Kid {
		return PublicKey{}, "kid is not the key's RFC 7638 thumbprint"
	}
	return pub, ""
}

// isJSONString tells a JSON string from null, which json.Unmarshal would
// accept into a string without complaint.
func isJSONString(v json.RawMessage) bool {
	return len(v) > 0 && v[0] == '"'
}
