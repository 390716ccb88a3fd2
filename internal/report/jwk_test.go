package report

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestThumbprintRFC8037(t *testing.T) {
	// RFC 8037 Appendix A.2 gives the public key of A.1's private key, and
	// A.3 its RFC 7638 thumbprint.
	key := rfc8037Key(t)
	x := base64.RawURLEncoding.EncodeToString(key.Public().Key)
	if want := "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"; x != want {
		t.Fatalf("x %s, want %s", x, want)
	}
	const want = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
	if key.Kid != want {
		t.Errorf("kid %s, want %s", key.Kid, want)
	}
	got, err := Thumbprint(key.Public().Key)
	if err != nil || got != want {
		t.Errorf("Thumbprint %s %v, want %s", got, err, want)
	}
	if _, err := Thumbprint(ed25519.PublicKey{1}); !errors.Is(err, ErrBadKey) {
		t.Errorf("short key: got %v, want %v", err, ErrBadKey)
	}
}

func TestMarshalJWKS(t *testing.T) {
	got, err := MarshalJWKS(NewKeySet(rfc8037Key(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k","use":"sig","alg":"EdDSA"}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := MarshalJWKS(KeySet{}); !errors.Is(err, ErrBadKey) {
		t.Errorf("empty set: got %v, want %v", err, ErrBadKey)
	}
	liar := KeySet{Current: PublicKey{Kid: "not-the-thumbprint", Key: rfc8037Key(t).Public().Key}}
	if _, err := MarshalJWKS(liar); !errors.Is(err, ErrBadKey) {
		t.Errorf("wrong kid: got %v, want %v", err, ErrBadKey)
	}
}

func TestJWKSRoundTrip(t *testing.T) {
	current := seededKey(t, 20)
	set := NewKeySet(current, seededKey(t, 21).Public(), seededKey(t, 22).Public())
	raw, err := MarshalJWKS(set)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseJWKS(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, set) {
		t.Errorf("got %+v\nwant %+v", got, set)
	}
	signed, err := Sign(sampleDoc(), current)
	if err != nil {
		t.Fatal(err)
	}
	if kid, err := Verify(signed, got); err != nil || kid != current.Kid {
		t.Errorf("verify with parsed set: kid %q err %v", kid, err)
	}
	t.Run("use and alg are optional", func(t *testing.T) {
		k := rfc8037Key(t)
		doc := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"}]}`
		got, err := ParseJWKS([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got.Current.Kid != k.Kid || len(got.Retired) != 0 {
			t.Errorf("got %+v", got)
		}
	})
}

func TestParseJWKSStrict(t *testing.T) {
	const (
		x   = `"x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"`
		kid = `"kid":"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"`
		ok  = `{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"use":"sig","alg":"EdDSA"}`
	)
	other := seededKey(t, 23).Public()
	otherX := base64.RawURLEncoding.EncodeToString(other.Key)
	cases := map[string]string{
		"not JSON":                  `{"keys":[`,
		"not an object":             `[` + ok + `]`,
		"null":                      `null`,
		"no keys member":            `{}`,
		"keys is null":              `{"keys":null}`,
		"keys is an object":         `{"keys":` + ok + `}`,
		"no keys":                   `{"keys":[]}`,
		"extra top-level member":    `{"keys":[` + ok + `],"x":1}`,
		"duplicate member name":     `{"keys":[{"kty":"OKP","kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `}]}`,
		"trailing data":             `{"keys":[` + ok + `]} {}`,
		"key is a string":           `{"keys":["abc"]}`,
		"RSA key":                   `{"keys":[{"kty":"RSA","crv":"Ed25519",` + x + `,` + kid + `}]}`,
		"X25519 key":                `{"keys":[{"kty":"OKP","crv":"X25519",` + x + `,` + kid + `}]}`,
		"missing kty":               `{"keys":[{"crv":"Ed25519",` + x + `,` + kid + `}]}`,
		"missing x":                 `{"keys":[{"kty":"OKP","crv":"Ed25519",` + kid + `}]}`,
		"missing kid":               `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `}]}`,
		"kid is not the thumbprint": `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,"kid":"` + other.Kid + `"}]}`,
		"x padded":                  `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo=",` + kid + `}]}`,
		"x standard base64":         `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo",` + kid + `}]}`,
		"x too short":               `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg",` + kid + `}]}`,
		"private part":              `{"keys":[{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",` + x + `,` + kid + `}]}`,
		"unknown member":            `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"key_ops":["verify"]}]}`,
		"use enc":                   `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"use":"enc"}]}`,
		"use empty":                 `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"use":""}]}`,
		"alg ES256":                 `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"alg":"ES256"}]}`,
		"member is null":            `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"alg":null}]}`,
		"member is a number":        `{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"use":1}]}`,
		"same kid twice":            `{"keys":[` + ok + `,` + ok + `]}`,
		"second key bad":            `{"keys":[` + ok + `,{"kty":"OKP","crv":"Ed25519","x":"` + otherX + `",` + kid + `}]}`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseJWKS([]byte(doc)); !errors.Is(err, ErrBadJWKS) {
				t.Errorf("got %v, want %v", err, ErrBadJWKS)
			}
		})
	}
	t.Run("errors never quote the document", func(t *testing.T) {
		const canary = "CANARY-7f3a9"
		for _, doc := range []string{
			`{"keys":[{"kty":"OKP","crv":"Ed25519",` + x + `,` + kid + `,"` + canary + `":"1"}]}`,
			`{"keys":[{"kty":"` + canary + `","crv":"Ed25519",` + x + `,` + kid + `}]}`,
			`{"` + canary + `":1}`,
			`{"keys":[` + canary + `]}`,
		} {
			_, err := ParseJWKS([]byte(doc))
			if err == nil || strings.Contains(err.Error(), canary) {
				t.Errorf("error %v for %s", err, doc)
			}
		}
	})
}
