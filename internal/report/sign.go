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
//
// The document is marshalled once and canonicalized once; the signed bytes
// and the result are both written from that one canonical tree.
func Sign(doc any, key Key) ([]byte, error) {
	if err := key.check(); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, ErrInvalidJSON
	}
	tree, err := canonicalTree(raw)
	if err != nil {
		return nil, err
	}
	if tree.kind != kindObject {
		return nil, ErrInvalidJSON
	}
	if i := tree.member(signatureMember); i >= 0 {
		tree = tree.without(i)
	}
	signed := tree.bytes()
	value := base64.RawURLEncoding.EncodeToString(ed25519.Sign(key.Private, signed))
	// The signature member in canonical form: its names are already in order.
	sig := []byte(`{"alg":`)
	sig = appendQuoted(sig, AlgEd25519)
	sig = append(sig, `,"kid":`...)
	sig = appendQuoted(sig, key.Kid)
	sig = append(sig, `,"value":`...)
	sig = appendQuoted(sig, value)
	sig = append(sig, '}')
	out := tree.with(cmember{name: signatureMember, qname: []byte(`"signature"`), val: cval{text: sig}})
	return out.bytes(), nil
}

// Verify checks a signed document against keys and returns the kid that
// signed it. The document is recanonicalized, so whitespace and member order
// do not matter; any change to a value does. Errors are the Err values above.
func Verify(signedJSON []byte, keys KeySet) (kid string, err error) {
	tree, err := canonicalTree(signedJSON)
	if err != nil || tree.kind != kindObject {
		return "", ErrMalformed
	}
	i := tree.member(signatureMember)
	if i < 0 {
		return "", ErrNoSignature
	}
	sig, err := parseSignature(tree.members[i].val.bytes())
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
	rest := tree.without(i)
	if !ed25519.Verify(pub, rest.bytes(), value) {
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
