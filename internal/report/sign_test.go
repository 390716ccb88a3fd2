package report

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// rfc8037Key is the Ed25519 example key of RFC 8037 Appendix A.1.
func rfc8037Key(t testing.TB) Key {
	t.Helper()
	seed, err := base64.RawURLEncoding.DecodeString("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// seededKey is a deterministic key made from one repeated byte.
func seededKey(t testing.TB, b byte) Key {
	t.Helper()
	k, err := GenerateKey(bytes.NewReader(bytes.Repeat([]byte{b}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sampleDoc() map[string]any {
	return map[string]any{
		"service":    "payability-verdict",
		"version":    "1.0.0",
		"op":         "check",
		"url":        "https://api.example.com/paid?x=1&y=2",
		"checked_at": "2026-11-29T15:04:05.123Z",
		"state":      "POPULATED",
		"price":      map[string]any{"amount": "10000", "asset": "USDC"},
		"payment":    map[string]any{"rail": "direct", "tx": "5h2…", "fee_lamports": "5000"},
		"factors": map[string]any{
			"header_present": true, "description_overlong": false, "reason": nil, "status": 402,
		},
		"exposures": []any{},
		"probes":    []any{map[string]any{"id": "baseline_get", "status": 402}, map[string]any{"id": "head", "status": 402}},
	}
}

func TestSignKnownAnswer(t *testing.T) {
	key := rfc8037Key(t)
	got, err := Sign(map[string]any{"op": "check", "amount": "10000"}, key)
	if err != nil {
		t.Fatal(err)
	}
	// The signed bytes are the canonical document without "signature",
	// computed here by hand, independently of Canonical.
	value := base64.RawURLEncoding.EncodeToString(ed25519.Sign(key.Private, []byte(`{"amount":"10000","op":"check"}`)))
	want := `{"amount":"10000","op":"check","signature":{"alg":"Ed25519","kid":"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k","value":"` + value + `"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	key := seededKey(t, 7)
	keys := NewKeySet(key)
	docs := map[string]any{
		"map":         sampleDoc(),
		"raw message": json.RawMessage(`{"b": "2", "a": [1, 2, {"z": null}]}`),
		"struct": struct {
			Op     string `json:"op"`
			Amount string `json:"amount"`
		}{"memo", "10000"},
		"empty object": map[string]any{},
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			signed, err := Sign(doc, key)
			if err != nil {
				t.Fatal(err)
			}
			kid, err := Verify(signed, keys)
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if kid != key.Kid {
				t.Errorf("kid %q, want %q", kid, key.Kid)
			}
			var got struct{ Signature Signature }
			if err := json.Unmarshal(signed, &got); err != nil {
				t.Fatal(err)
			}
			if got.Signature.Alg != "Ed25519" || got.Signature.Kid != key.Kid || len(got.Signature.Value) != 86 {
				t.Errorf("signature member %+v", got.Signature)
			}
		})
	}
	t.Run("reformatting does not matter", func(t *testing.T) {
		signed, err := Sign(sampleDoc(), key)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(signed, &v); err != nil {
			t.Fatal(err)
		}
		pretty, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(pretty, keys); err != nil {
			t.Errorf("pretty-printed: %v", err)
		}
	})
	t.Run("signing a signed document replaces the signature", func(t *testing.T) {
		first, err := Sign(sampleDoc(), key)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Sign(json.RawMessage(first), key)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Errorf("re-signing changed the document:\n%s\n%s", first, again)
		}
		other := seededKey(t, 8)
		resigned, err := Sign(json.RawMessage(first), other)
		if err != nil {
			t.Fatal(err)
		}
		if kid, err := Verify(resigned, NewKeySet(other)); err != nil || kid != other.Kid {
			t.Errorf("resigned: kid %q err %v", kid, err)
		}
	})
	t.Run("a retired key still verifies", func(t *testing.T) {
		old := seededKey(t, 9)
		signed, err := Sign(sampleDoc(), old)
		if err != nil {
			t.Fatal(err)
		}
		kid, err := Verify(signed, NewKeySet(key, old.Public()))
		if err != nil || kid != old.Kid {
			t.Errorf("kid %q err %v", kid, err)
		}
	})
}

func TestSignRefuses(t *testing.T) {
	key := seededKey(t, 1)
	for name, doc := range map[string]any{
		"array":          []string{"a"},
		"string":         "x",
		"null":           nil,
		"unsafe number":  map[string]any{"lamports": uint64(1) << 60},
		"fractional":     map[string]any{"usd": 0.01},
		"duplicate name": json.RawMessage(`{"a":"1","a":"2"}`),
	} {
		if _, err := Sign(doc, key); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	for name, k := range map[string]Key{
		"zero key":      {},
		"short private": {Kid: key.Kid, Private: key.Private[:10]},
		"wrong kid":     {Kid: seededKey(t, 2).Kid, Private: key.Private},
		"no kid":        {Private: key.Private},
	} {
		if _, err := Sign(sampleDoc(), k); !errors.Is(err, ErrBadKey) {
			t.Errorf("%s: got %v, want %v", name, err, ErrBadKey)
		}
	}
}

// mutations returns every document that differs from doc in one place: each
// leaf value changed, each member removed, a member added.
func mutations(doc any) []any {
	var out []any
	switch v := doc.(type) {
	case map[string]any:
		for k, child := range v {
			if k == "signature" {
				continue
			}
			for _, m := range mutations(child) {
				c := shallowMap(v)
				c[k] = m
				out = append(out, c)
			}
			c := shallowMap(v)
			delete(c, k)
			out = append(out, c)
		}
		c := shallowMap(v)
		c["extra"] = "x"
		out = append(out, c)
	case []any:
		for i, child := range v {
			for _, m := range mutations(child) {
				c := append([]any(nil), v...)
				c[i] = m
				out = append(out, c)
			}
		}
		out = append(out, append(append([]any(nil), v...), "x"))
	case string:
		out = append(out, v+"x", strings.ToUpper(v)+"!")
	case float64:
		out = append(out, v+1, -v-1)
	case bool:
		out = append(out, !v)
	case nil:
		out = append(out, false)
	}
	return out
}

func shallowMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestVerifyTamper(t *testing.T) {
	key := seededKey(t, 3)
	keys := NewKeySet(key)
	signed, err := Sign(sampleDoc(), key)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(signed, &doc); err != nil {
		t.Fatal(err)
	}
	muts := mutations(doc)
	if len(muts) < 40 {
		t.Fatalf("only %d mutations", len(muts))
	}
	for _, m := range muts {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(raw, keys); !errors.Is(err, ErrBadSignature) {
			t.Errorf("tampered %s: got %v, want %v", raw, err, ErrBadSignature)
		}
	}
}

func TestVerifyFailures(t *testing.T) {
	key := seededKey(t, 4)
	other := seededKey(t, 5)
	keys := NewKeySet(key, other.Public())
	signed, err := Sign(sampleDoc(), key)
	if err != nil {
		t.Fatal(err)
	}
	withSig := func(sig any) []byte {
		var doc map[string]any
		if err := json.Unmarshal(signed, &doc); err != nil {
			t.Fatal(err)
		}
		if sig == nil {
			delete(doc, "signature")
		} else {
			doc["signature"] = sig
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var good Signature
	{
		var d struct{ Signature Signature }
		if err := json.Unmarshal(signed, &d); err != nil {
			t.Fatal(err)
		}
		good = d.Signature
	}
	sig := func(alg, kid, value string) map[string]any {
		return map[string]any{"alg": alg, "kid": kid, "value": value}
	}
	shortValue := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	paddedValue := base64.URLEncoding.EncodeToString(make([]byte, 64))
	cases := []struct {
		name string
		doc  []byte
		want error
	}{
		{"not JSON", []byte("not json"), ErrMalformed},
		{"empty", nil, ErrMalformed},
		{"array", []byte(`[1,2]`), ErrMalformed},
		{"null", []byte(`null`), ErrMalformed},
		{"string", []byte(`"signature"`), ErrMalformed},
		{"duplicate member", []byte(`{"a":"1","a":"1","signature":{}}`), ErrMalformed},
		{"unsafe number", []byte(`{"n":9007199254740993,"signature":{"alg":"Ed25519","kid":"k","value":"v"}}`), ErrMalformed},
		{"no signature", withSig(nil), ErrNoSignature},
		{"signature is a string", withSig("abc"), ErrMalformed},
		{"signature is an array", withSig([]any{}), ErrMalformed},
		{"signature is null", withSig(json.RawMessage(`null`)), ErrMalformed},
		{"signature has an extra member", withSig(map[string]any{"alg": good.Alg, "kid": good.Kid, "value": good.Value, "x": "1"}), ErrMalformed},
		{"signature lacks value", withSig(map[string]any{"alg": good.Alg, "kid": good.Kid}), ErrMalformed},
		{"signature value not a string", withSig(map[string]any{"alg": good.Alg, "kid": good.Kid, "value": 5}), ErrMalformed},
		{"signature kid null", withSig(map[string]any{"alg": good.Alg, "kid": nil, "value": good.Value}), ErrMalformed},
		{"alg EdDSA", withSig(sig("EdDSA", good.Kid, good.Value)), ErrBadAlg},
		{"alg none", withSig(sig("none", good.Kid, good.Value)), ErrBadAlg},
		{"unknown kid", withSig(sig(good.Alg, seededKey(t, 6).Kid, good.Value)), ErrUnknownKid},
		{"value not base64url", withSig(sig(good.Alg, good.Kid, "!!!")), ErrMalformed},
		{"value padded", withSig(sig(good.Alg, good.Kid, paddedValue)), ErrMalformed},
		{"value too short", withSig(sig(good.Alg, good.Kid, shortValue)), ErrMalformed},
		{"another known key's kid", withSig(sig(good.Alg, other.Kid, good.Value)), ErrBadSignature},
		{"zero signature", withSig(sig(good.Alg, good.Kid, base64.RawURLEncoding.EncodeToString(make([]byte, 64)))), ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kid, err := Verify(c.doc, keys)
			if !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
			if kid != "" {
				t.Errorf("kid %q on failure", kid)
			}
			var e *Error
			if !errors.As(err, &e) || "report: "+e.Code() != err.Error() {
				t.Errorf("error %q is not closed-form", err)
			}
		})
	}
	t.Run("a key of the wrong length in the set is never used", func(t *testing.T) {
		bad := KeySet{Current: PublicKey{Kid: key.Kid, Key: ed25519.PublicKey{1, 2, 3}}}
		if _, err := Verify(signed, bad); !errors.Is(err, ErrUnknownKid) {
			t.Errorf("got %v, want %v", err, ErrUnknownKid)
		}
		if _, err := Verify(signed, KeySet{}); !errors.Is(err, ErrUnknownKid) {
			t.Errorf("empty set: got %v, want %v", err, ErrUnknownKid)
		}
	})
}

func FuzzVerify(f *testing.F) {
	key := seededKey(f, 11)
	keys := NewKeySet(key, seededKey(f, 12).Public())
	signed, err := Sign(sampleDoc(), key)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"signature":{"alg":"Ed25519","kid":"` + key.Kid + `","value":""}}`))
	f.Add([]byte(`{"a":[1,2,{"b":null}],"signature":null}`))
	f.Add([]byte(rfcSortingIn))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]`))
	f.Add([]byte("{\"\xff\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kid, err := Verify(data, keys)
		if err == nil {
			if _, ok := keys.Lookup(kid); !ok {
				t.Fatalf("verified under kid %q not in the set", kid)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || kid != "" {
			t.Fatalf("error %v (kid %q) is not closed-form", err, kid)
		}
	})
}
