package x402check_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/exchangerebel/payability/x402check"
)

// A preflight of an honest seller (here on loopback, hence AllowPrivate).
func ExamplePreflight() {
	s := newSeller(false)
	defer s.Close()
	rec, err := x402check.Preflight(context.Background(), s.URL(), x402check.Options{AllowPrivate: true, MaxAmount: "20000"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Decision, rec.Reasons, rec.Method, len(rec.TermsSHA256))
	// Output: GO [] GET 64
}

// A seller that serves any request carrying a payment header is STOP.
func ExamplePreflight_failOpen() {
	s := newSeller(true)
	defer s.Close()
	rec, _ := x402check.Preflight(context.Background(), s.URL(), x402check.Options{AllowPrivate: true})
	fmt.Println(rec.Decision, rec.Reasons)
	// Output: STOP [fail_open]
}

// The Guard in front of an x402 client: the fail-open seller's 402 never
// reaches the client; the honest seller's does, and Checked gives the
// terms_sha256 the client's before-payment hook compares.
func ExampleGuard() {
	g := &x402check.Guard{Options: x402check.Options{AllowPrivate: true}}
	client := &http.Client{Transport: g} // hand this client to the x402 SDK

	open := newSeller(true)
	defer open.Close()
	_, err := client.Get(open.URL())
	var refused *x402check.Refused
	fmt.Println(errors.As(err, &refused), refused.Decision, refused.Reasons)

	honest := newSeller(false)
	defer honest.Close()
	resp, err := client.Get(honest.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	terms, ok := g.Checked(honest.URL())
	fmt.Println(resp.StatusCode, ok, len(terms))
	// Output:
	// true STOP [fail_open]
	// 402 true 64
}

// Binding: the hash of the requirements about to be signed must equal the
// hash the preflight checked.
func ExampleRequirementsHash() {
	s := newSeller(false)
	defer s.Close()
	rec, _ := x402check.Preflight(context.Background(), s.URL(), x402check.Options{AllowPrivate: true})
	requirements := []byte(`{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"10000",
		"asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","payTo":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
		"maxTimeoutSeconds":60,"extra":{}}`)
	h, _ := x402check.RequirementsHash(2, s.URL(), requirements)
	fmt.Println(h == rec.TermsSHA256)
	// Output: true
}

// The terms hash of every entry of a challenge, as `payability terms-hash`
// prints it: here a v1 body.
func ExampleTermsHash() {
	body := []byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"10000",
		"resource":"https://api.example.com/weather","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"payTo":"0x5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed","maxTimeoutSeconds":60},{"scheme":"exact","network":"base"}]}`)
	hs, _ := x402check.TermsHash(body)
	for _, h := range hs {
		fmt.Println(h.Leg, h.Index, h.Network, len(h.TermsSHA256))
	}
	// Output:
	// body 0 base 64
	// body 1 base 0
}

// Lint of an honest seller: it conforms.
func ExampleLint() {
	s := newSeller(false)
	defer s.Close()
	rep, err := x402check.Lint(context.Background(), s.URL(), x402check.Options{AllowPrivate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Status, rep.Conforms)
	// Output: 402 true
}
