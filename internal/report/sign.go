package report

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
)

// AlgEd25519 is the only signature algorithm a report carries.
const AlgEd25519 = "Ed25519"

// signatureMember is the top-level member that holds the signature; the
// signed bytes are the canonical form of the document without it.
const signatureMember = "signature"

// Signature is the "signature" member of a signed document.
type Signature struct {
	Alg   string `json:"alg"`   // always "Ed25519"
	Kid   string `json:"kid"`   // RFC 7638 thumbprint of the signing key
	Value string `json:"value"` // base64url, no padding, of the 64-byte signature
}

// Verification failures, in the order Verify checks for them.
var (
	ErrMalformed    = &Error{"malformed"}     // not a canonicalizable JSON object, or a signature member of the wrong shape
	ErrNoSignature  = &Error{"no_signature"}  // no "signature" member
	ErrBadAlg       = &Error{"bad_alg"}       // alg other than "Ed25519"
	ErrUnknownKid   = &Error{"unknown_kid"}   // kid not in the key set
	ErrBadSignature = &Error{"bad_signature"} // the signature does not verify
)

// ErrBadKey: a signing key whose private part or kid is not right.
var ErrBadKey = &Error{"bad_key"}

// Sign returns doc with a "signature" member added, as canonical JSON. doc is
// anything that marshals to a JSON object (a map[string]any, a struct, a
// json.RawMessage); a "signature" member already in it is replaced. The
// signature covers the RFC 8785 canonical form of the document without its
// "signature" member.
func Sign(doc any, key Key) ([]byte, error) {
	if err := key.check(); err != nil {
		return nil, err
	}
	members, err := objectMembers(doc)
	if err != nil {
		return nil, err
	}
	delete(members, signatureMember)
	signed, err := Canonical(members)
	if err != nil {
		return nil, err
	}
	sig := Signature{
		Alg:   AlgEd25519,
		Kid:   key.Kid,
		Value: base64.RawURLEncoding.EncodeToString(ed25519.Sign(key.Private, signed)),
	}
	raw, err := json.Marshal(sig)
	if err != nil {
		return nil, ErrInvalidJSON
	}
	members[signatureMember] = raw
	return Canonical(members)
}

// Verify checks a signed document against keys and returns the kid that
// signed it. The document is recanonicalized, so whitespace and member order
// do not matter; any change to a value does. Errors are the Err values above.
func Verify(signedJSON []byte, keys KeySet) (kid string, err error) {
	canonical, err := canonicalBytes(signedJSON)
	if err != nil {
		return "", ErrMalformed
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(canonical, &members); err != nil || members == nil {
		return "", ErrMalformed
	}
	rawSig, ok := members[signatureMember]
	if !ok {
		return "", ErrNoSignature
	}
	sig, err := parseSignature(rawSig)
	if err != nil {
		return "", err
	}
	if sig.Alg != AlgEd25519 {
		return "", ErrBadAlg
	}
	pub, ok := keys.Lookup(sig.Kid)
	if !ok {
		return "", ErrUnknownKid
	}
	value, err := base64.RawURLEncoding.Strict().DecodeString(sig.Value)
	if err != nil || len(value) != ed25519.SignatureSize {
		return "", ErrMalformed
	}
	delete(members, signatureMember)
	signed, err := Canonical(members)
	if err != nil {
		return "", ErrMalformed
	}
	if !ed25519.Verify(pub, signed, value) {
		return "", ErrBadSignature
	}
	return sig.Kid, nil
}

// parseSignature accepts exactly {"alg","kid","value"}, all non-empty strings.
func parseSignature(raw json.RawMessage) (Signature, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || len(members) != 3 {
		return Signature{}, ErrMalformed
	}
	var sig Signature
	for name, dst := range map[string]*string{"alg": &sig.Alg, "kid": &sig.Kid, "value": &sig.Value} {
		v, ok := members[name]
		if !ok {
			return Signature{}, ErrMalformed
		}
		if err := json.Unmarshal(v, dst); err != nil || *dst == "" {
			return Signature{}, ErrMalformed
		}
	}
	return sig, nil
}

// objectMembers canonicalizes doc and splits it into its top-level members.
func objectMembers(doc any) (map[string]json.RawMessage, error) {
	canonical, err := Canonical(doc)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(canonical, &members); err != nil || members == nil {
		return nil, ErrInvalidJSON
	}
	return members, nil
}
