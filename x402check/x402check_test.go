package x402check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"slices"
	"testing"

	"github.com/exchangerebel/payability/x402check"
)

func TestGuard(t *testing.T) {
	cases := []struct {
		name    string
		seller  *seller
		guard   guardConfig
		refused *x402check.Refused // nil: the 402 is passed through
	}{
		{"honest GO", &seller{}, guardConfig{}, nil},
		{"fail-open STOP", &seller{failOpen: true}, guardConfig{}, &x402check.Refused{Decision: x402check.Stop, Reasons: []string{"fail_open"}}},
		{"HEAD served unpaid HOLD", &seller{headOpen: true}, guardConfig{}, &x402check.Refused{Decision: x402check.Hold, Reasons: []string{"method_open"}}},
		{"HOLD allowed", &seller{headOpen: true}, guardConfig{AllowHold: true}, nil},
		{"HOLD whose reasons are allowed", &seller{headOpen: true}, guardConfig{AllowReasons: []string{"method_open"}}, nil},
		{"HOLD with another reason allowed", &seller{headOpen: true}, guardConfig{AllowReasons: []string{"lint_warnings"}}, &x402check.Refused{Decision: x402check.Hold, Reasons: []string{"method_open"}}},
		{"over budget STOP", &seller{}, guardConfig{Options: x402check.Options{MaxAmount: "9999"}}, &x402check.Refused{Decision: x402check.Stop, Reasons: []string{"over_budget", "payment_not_verified"}}},
		{"another network STOP", &seller{}, guardConfig{Options: x402check.Options{Network: "eip155:8453"}}, &x402check.Refused{Decision: x402check.Stop, Reasons: []string{"no_payable_entry", "payment_not_verified"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startSeller(t, c.seller)
			g := &x402check.Guard{Options: c.guard.Options, AllowHold: c.guard.AllowHold, AllowReasons: c.guard.AllowReasons}
			g.Options.AllowPrivate = true
			resp, err := (&http.Client{Transport: g}).Get(s.URL())
			if c.refused == nil {
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusPaymentRequired {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if terms, ok := g.Checked(s.URL()); (c.guard.AllowHold || c.guard.AllowReasons != nil) == ok || (ok && len(terms) != 64) {
					t.Fatalf("Checked = %q %v: only a GO is remembered", terms, ok)
				}
				return
			}
			var r *x402check.Refused
			if !errors.As(err, &r) {
				t.Fatalf("err = %v, want *Refused", err)
			}
			if r.Decision != c.refused.Decision || !slices.Equal(r.Reasons, c.refused.Reasons) || r.Record == nil || r.Record.Decision != r.Decision {
				t.Fatalf("refused %s %v, want %s %v", r.Decision, r.Reasons, c.refused.Decision, c.refused.Reasons)
			}
			if _, ok := g.Checked(s.URL()); ok {
				t.Fatal("a refused resource is not Checked")
			}
		})
	}
}

// guardConfig is what a case sets on its Guard.
type guardConfig struct {
	Options      x402check.Options
	AllowHold    bool
	AllowReasons []string
}

func startSeller(t *testing.T, s *seller) *seller {
	t.Helper()
	n := newSeller(s.failOpen)
	n.headOpen, n.post = s.headOpen, s.post
	t.Cleanup(n.Close)
	return n
}

func TestGuardPassesWhatItDoesNotCheck(t *testing.T) {
	s := startSeller(t, &seller{failOpen: true})
	g := &x402check.Guard{Options: x402check.Options{AllowPrivate: true}}
	c := &http.Client{Transport: g}
	// A paid request's answer is the caller's client's business.
	req, _ := http.NewRequest(http.MethodGet, s.URL(), nil)
	req.Header.Set("PAYMENT-SIGNATURE", "e30=")
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a paid request: %v %v", resp, err)
	}
	resp.Body.Close()
	// Not a 402: untouched (the seller answers 405 to PUT).
	req, _ = http.NewRequest(http.MethodPut, s.URL(), nil)
	resp, err = c.Do(req)
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("a 405: %v %v", resp, err)
	}
	resp.Body.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.payments != 1 {
		t.Fatalf("the guard sent %d payment probes for requests it does not check", s.payments-1)
	}
}

func TestGuardReplaysThePOSTBody(t *testing.T) {
	s := startSeller(t, &seller{post: true})
	g := &x402check.Guard{Options: x402check.Options{AllowPrivate: true}}
	resp, err := (&http.Client{Transport: g}).Post(s.URL(), "application/json", bytes.NewReader([]byte(`{"city":"Lyon"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.mu.Lock()
	bodies := slices.Clone(s.bodies)
	s.mu.Unlock()
	if len(bodies) < 3 || slices.ContainsFunc(bodies, func(b string) bool { return b != `{"city":"Lyon"}` }) {
		t.Fatalf("the preflight's POSTs carried %q", bodies)
	}
	// A body that cannot be read again cannot be checked.
	req, _ := http.NewRequest(http.MethodPost, s.URL(), bytes.NewReader([]byte(`{}`)))
	req.GetBody = nil
	if _, err := (&http.Client{Transport: g}).Do(req); !errors.Is(err, x402check.ErrNotCheckable) {
		t.Fatalf("err = %v, want ErrNotCheckable", err)
	}
}

func TestInputErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		o    x402check.Options
		arg  string
		lint bool
	}{
		{"ftp://seller.example/", x402check.Options{}, "url", true},
		{"https://user:pw@seller.example/", x402check.Options{}, "url", true},
		{"https://seller.example/", x402check.Options{Method: "PUT"}, "method", true},
		{"https://seller.example/", x402check.Options{Body: []byte("{")}, "body", true},
		{"https://seller.example/", x402check.Options{Network: "base"}, "network", false},
		{"https://seller.example/", x402check.Options{MaxAmount: "1.5"}, "max-amount", false},
	} {
		var ie *x402check.InputError
		if _, err := x402check.Preflight(ctx, c.url, c.o); !errors.As(err, &ie) || ie.Arg != c.arg {
			t.Errorf("Preflight %s %+v: %v, want an InputError on %s", c.url, c.o, err, c.arg)
		}
		if c.lint {
			if _, err := x402check.Lint(ctx, c.url, c.o); !errors.As(err, &ie) || ie.Arg != c.arg {
				t.Errorf("Lint %s %+v: %v, want an InputError on %s", c.url, c.o, err, c.arg)
			}
		}
	}
	// The address guard: loopback needs AllowPrivate, and is then a decision, not an error.
	s := startSeller(t, &seller{})
	rec, err := x402check.Preflight(ctx, s.URL(), x402check.Options{})
	if err != nil || rec.Decision != x402check.Stop || rec.Reasons[0] != "unreachable" || rec.FetchError != "address_refused" {
		t.Fatalf("a loopback seller without AllowPrivate: %v %v", rec, err)
	}
}

func TestLintAndTermsHash(t *testing.T) {
	s := startSeller(t, &seller{})
	rep, err := x402check.Lint(context.Background(), s.URL(), x402check.Options{AllowPrivate: true})
	if err != nil || !rep.Conforms || rep.Status != 402 || rep.Method != "GET" {
		t.Fatalf("%+v %v", rep, err)
	}
	var whole map[string]any
	if err := json.Unmarshal(rep.JSON(), &whole); err != nil || whole["op"] != "lint" || whole["rules"] == nil {
		t.Fatalf("the whole report: %v %v", whole, err)
	}
	if _, err := x402check.TermsHash([]byte("not a challenge")); !errors.Is(err, x402check.ErrNotAChallenge) {
		t.Fatal(err)
	}
	if _, err := x402check.RequirementsHash(2, s.URL(), []byte(`{"scheme":"exact"}`)); !errors.Is(err, x402check.ErrIncompleteTerms) {
		t.Fatal(err)
	}
	if _, err := x402check.RequirementsHash(3, s.URL(), []byte(`{}`)); err == nil {
		t.Fatal("version 3 hashed")
	}
}

// The record Preflight returns is the record the binary prints: the same
// members (the times and the version aside, which differ per run).
func TestPreflightRecordIsTheCLIRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	s := startSeller(t, &seller{})
	rec, err := x402check.Preflight(context.Background(), s.URL(), x402check.Options{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("go", "run", "../cmd/payability", "preflight", "--json", "--allow-private", s.URL()).Output()
	cli, err := x402check.ParsePreflightRecord(out)
	if err != nil {
		t.Fatalf("the CLI's record: %v", err)
	}
	var a, b map[string]any
	json.Unmarshal(rec.JSON(), &a)
	json.Unmarshal(cli.JSON(), &b)
	for _, m := range []map[string]any{a, b} {
		delete(m, "checked_at")
		delete(m, "summary")
		delete(m, "version")
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("the API's record\n%s\nis not the CLI's\n%s", ja, jb)
	}
	if cli.Decision != x402check.Go || cli.TermsSHA256 != rec.TermsSHA256 {
		t.Fatal(cli.Decision, cli.TermsSHA256)
	}
}
