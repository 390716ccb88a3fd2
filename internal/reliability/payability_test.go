package reliability

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/report"
)

// captures is a fake fetcher: a capture per URL, a failed fetch otherwise.
type captures map[string]capture.Capture

func (c captures) Get(_ context.Context, u string) capture.Capture {
	if got, ok := c[u]; ok {
		return got
	}
	return capture.Capture{Outcome: capture.Failed}
}

const (
	pfAPI      = "https://monitor.example"
	pfIntended = "https://seller.example/paid"
	pfNetwork  = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
)

func pfChallenge(payTo string) capture.Capture {
	doc := map[string]any{"x402Version": 2, "resource": map[string]any{"url": pfIntended},
		"accepts": []any{map[string]any{"scheme": "exact", "network": pfNetwork, "amount": "1000",
			"asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "payTo": payTo, "maxTimeoutSeconds": 60}}}
	raw, _ := json.Marshal(doc)
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{"Payment-Required": {base64.StdEncoding.EncodeToString(raw)}}, Body: []byte("{}")}
}

func termsOf(t *testing.T, c capture.Capture) string {
	hs := preflight.HashEntries(lint.Decode(c))
	if len(hs) != 1 || hs[0].TermsSHA256 == nil {
		t.Fatalf("hashes %+v", hs)
	}
	return *hs[0].TermsSHA256
}

type pfScene struct {
	key     report.Key
	now     time.Time
	fetch   captures
	payee   string
	mutate  func(map[string]any)
	signKey *report.Key // another key signs when set
}

func (s *pfScene) run(t *testing.T) PayabilityResult {
	t.Helper()
	live := pfChallenge(s.payee)
	rec := map[string]any{
		"source": "payability", "version": "0.1.0", "service_id": "seller", "status": "operational",
		"endpoint_url": pfIntended, "last_verified_at": s.now.Add(-time.Minute).Format(time.RFC3339Nano),
		"active_incident": nil, "network": pfNetwork, "terms_sha256": termsOf(t, pfChallenge("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin")),
		"checks_30d": 10, "passing_percent_30d": "100.0", "not_measured": []string{"paid_delivery"}, "generated_at": s.now.Format(time.RFC3339Nano),
	}
	if s.mutate != nil {
		s.mutate(rec)
	}
	k := s.key
	if s.signKey != nil {
		k = *s.signKey
	}
	signed, err := report.Sign(rec, k)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := report.MarshalJWKS(report.NewKeySet(s.key))
	s.fetch = captures{
		pfAPI + "/api/v1/reliability/seller": {Outcome: capture.OK, Status: 200, Body: signed},
		pfAPI + "/.well-known/jwks.json":     {Outcome: capture.OK, Status: 200, Body: jwks},
		pfIntended:                           live,
	}
	res, err := Client{Fetcher: s.fetch, API: pfAPI, Now: func() time.Time { return s.now }}.CheckPayability(context.Background(), "seller", pfIntended)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCheckPayability(t *testing.T) {
	key, err := report.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := report.GenerateKey(rand.Reader)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	good := "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	for _, tc := range []struct {
		name    string
		payee   string
		mutate  func(map[string]any)
		signer  *report.Key
		action  Action
		rule    Rule
		finding string
	}{
		{"healthy and bound: favourable", good, nil, nil, Favourable, RulePayabilityFavourable, ""},
		{"changed payee: terms mismatch", "7EYnhQoR9YM3N7UoaKRoA44Uy8JeaZV3qyouov87awMs", nil, nil, Unverified, RuleNotUsable, "terms_sha256/mismatch"},
		{"signed by another key", good, nil, &other, Unverified, RuleNotUsable, "signature/signature_invalid"},
		{"stale: 61 minutes", good, set("last_verified_at", now.Add(-61*time.Minute).Format(time.RFC3339Nano)), nil, Unverified, RuleNotUsable, "last_verified_at/stale"},
		{"60 minutes is fresh", good, set("last_verified_at", now.Add(-60*time.Minute).Format(time.RFC3339Nano)), nil, Favourable, RulePayabilityFavourable, ""},
		{"never verified", good, set("last_verified_at", nil), nil, Unverified, RuleNotUsable, "last_verified_at/not_measured"},
		{"no terms hash", good, set("terms_sha256", nil), nil, Unverified, RuleNotUsable, "terms_sha256/no_terms_hash"},
		{"another network", good, set("network", "eip155:8453"), nil, Unverified, RuleNotUsable, "terms_sha256/mismatch"},
		{"another endpoint", good, set("endpoint_url", "https://seller.example/other"), nil, Unverified, RuleNotUsable, "endpoint_url/mismatch"},
		{"another service id", good, set("service_id", "other"), nil, Unverified, RuleNotUsable, "service_id/mismatch"},
		{"claims a paid delivery", good, set("paid_delivery_percent", 99), nil, Unverified, RuleNotUsable, "paid_delivery_percent/claims_paid_delivery"},
		{"does not say not measured", good, set("not_measured", []string{}), nil, Unverified, RuleNotUsable, "not_measured/not_measured_missing"},
		{"degraded: warn", good, set("status", "degraded"), nil, Warn, RuleDegraded, ""},
		{"critical: do not call", good, set("status", "critical"), nil, DoNotCall, RuleCriticalOrIncident, ""},
		{"an incident: do not call", good, set("active_incident", map[string]any{"severity": "critical", "failure_stage": "not_402", "opened_at": now.Add(-time.Hour).Format(time.RFC3339Nano)}), nil, DoNotCall, RuleCriticalOrIncident, ""},
		{"unknown: unverified", good, set("status", "unknown"), nil, Unverified, RuleStatusUnknown, ""},
		{"not a payability record", good, set("source", "cortx"), nil, Unverified, RuleNotUsable, "source/not_in_enum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &pfScene{key: key, now: now, payee: tc.payee, mutate: tc.mutate, signKey: tc.signer}
			res := s.run(t)
			if res.Decision.Action != tc.action || res.Decision.Rule != tc.rule {
				t.Errorf("decision %+v, want %s %s; findings %+v", res.Decision, tc.action, tc.rule, res.Findings)
			}
			var fs []string
			for _, f := range res.Findings {
				fs = append(fs, f.Field+"/"+string(f.Code))
			}
			if tc.finding != "" && !strings.Contains(strings.Join(fs, " "), tc.finding) {
				t.Errorf("findings %v, want %s", fs, tc.finding)
			}
			if (res.Record != nil) != (tc.finding == "") {
				t.Errorf("record shown %v with findings %v", res.Record != nil, fs)
			}
		})
	}
}

func TestCheckPayabilityNotFoundAndNoJWKS(t *testing.T) {
	c := Client{Fetcher: captures{pfAPI + "/api/v1/reliability/seller": {Outcome: capture.OK, Status: 404}}, API: pfAPI}
	res, _ := c.CheckPayability(context.Background(), "seller", pfIntended)
	if res.Decision.Rule != RuleNotMonitored {
		t.Errorf("404: %+v", res.Decision)
	}
	c.Fetcher = captures{pfAPI + "/api/v1/reliability/seller": {Outcome: capture.OK, Status: 200, Body: []byte(`{}`)}}
	res, _ = c.CheckPayability(context.Background(), "seller", pfIntended)
	if res.Decision.Rule != RuleNotUsable || len(res.Findings) != 1 || res.Findings[0].Code != CodeNoJWKS {
		t.Errorf("no JWKS: %+v %+v", res.Decision, res.Findings)
	}
	if got := JWKSURL("https://m.example/base/api/v1/reliability/x"); got != "https://m.example/base/.well-known/jwks.json" {
		t.Errorf("JWKSURL %s", got)
	}
}

// TestBindPayabilityV1EntryByCAIP2: the record names the CAIP-2 network of
// the entry its hash is of; a v1 entry states the legacy name (base), and it
// binds under eip155:8453, not under another chain (issue 20).
func TestBindPayabilityV1EntryByCAIP2(t *testing.T) {
	body := `{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1000","resource":"` + pfIntended +
		`","description":"d","mimeType":"application/json","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}`
	live := capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte(body)}
	terms := termsOf(t, live)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for network, binds := range map[string]bool{"eip155:8453": true, "": true, "eip155:84532": false, "base": false} {
		r := PayabilityRecord{EndpointURL: pfIntended, TermsSHA256: terms, Network: network, LastVerifiedAt: now}
		bound, fs := BindPayability(r, pfIntended, live, now)
		if (bound != nil) != binds || (len(fs) == 0) != binds {
			t.Errorf("network %q: bound %+v, findings %+v; want bound %v", network, bound, fs, binds)
		}
	}
}
