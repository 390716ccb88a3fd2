package x402check

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Refused is the Guard's error when the preflight of a 402 said STOP, or
// HOLD that the Guard does not allow. The caller's x402 client never sees
// the 402, so it never signs.
type Refused struct {
	Decision Decision
	Reasons  []string
	Record   *PreflightRecord
}

func (e *Refused) Error() string {
	return "x402check: payment refused by preflight: " + string(e.Decision) + " " + strings.Join(e.Reasons, ",")
}

// ErrNotCheckable: a 402 answered a request the preflight cannot replay
// (a method other than GET or POST, or a body without GetBody).
var ErrNotCheckable = errors.New("x402check: the 402 answered a request the preflight cannot check (GET or POST with a replayable body only)")

// maxChecked bounds the resources whose last GO a Guard remembers.
const maxChecked = 1024

// Guard is an http.RoundTripper for x402 clients: when a response is a 402
// to a request that carries no payment, it runs Preflight on the request's
// URL, method and body (with Options' constraints) and returns the 402 to
// the caller's x402 client only on GO; on STOP, or on HOLD unless allowed,
// it returns a *Refused error. A paid request (PAYMENT-SIGNATURE or
// X-PAYMENT) passes through untouched.
type Guard struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Options are the preflight's constraints (Network, Scheme, Asset,
	// MaxAmount, AllowPrivate); Method and Body come from each request.
	Options Options
	// AllowHold passes a HOLD through; AllowReasons passes a HOLD whose
	// reasons are all listed.
	AllowHold    bool
	AllowReasons []string

	mu      sync.Mutex
	checked map[string]string // resource URL -> terms_sha256 of its last GO
	order   []string
}

// RoundTrip implements http.RoundTripper.
func (g *Guard) RoundTrip(req *http.Request) (*http.Response, error) {
	base := g.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusPaymentRequired || req.Header.Get("PAYMENT-SIGNATURE") != "" || req.Header.Get("X-PAYMENT") != "" {
		return resp, err
	}
	o := g.Options
	o.Method = req.Method
	switch {
	case req.Method != http.MethodGet && req.Method != http.MethodPost:
		resp.Body.Close()
		return nil, ErrNotCheckable
	case req.Method == http.MethodPost && req.Body != nil && req.Body != http.NoBody:
		if req.GetBody == nil {
			resp.Body.Close()
			return nil, ErrNotCheckable
		}
		rc, err := req.GetBody()
		if err != nil {
			resp.Body.Close()
			return nil, ErrNotCheckable
		}
		b, err := io.ReadAll(io.LimitReader(rc, 262145))
		rc.Close()
		if err != nil {
			resp.Body.Close()
			return nil, ErrNotCheckable
		}
		o.Body = b
	}
	url := req.URL.String()
	rec, err := Preflight(req.Context(), url, o)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if g.allowed(rec) {
		if rec.Decision == Go && rec.TermsSHA256 != "" {
			g.remember(url, rec.TermsSHA256)
		}
		return resp, nil
	}
	// The 402 is consumed here: the caller's client never reads its terms.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return nil, &Refused{Decision: rec.Decision, Reasons: append([]string(nil), rec.Reasons...), Record: rec}
}

func (g *Guard) allowed(rec *PreflightRecord) bool {
	switch rec.Decision {
	case Go:
		return true
	case Hold:
		if g.AllowHold {
			return true
		}
		return len(rec.Reasons) > 0 && !slices.ContainsFunc(rec.Reasons, func(r string) bool { return !slices.Contains(g.AllowReasons, r) })
	}
	return false
}

func (g *Guard) remember(url, terms string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.checked == nil {
		g.checked = map[string]string{}
	}
	if _, ok := g.checked[url]; !ok {
		if len(g.order) >= maxChecked {
			delete(g.checked, g.order[0])
			g.order = g.order[1:]
		}
		g.order = append(g.order, url)
	}
	g.checked[url] = terms
}

// Checked returns the terms_sha256 of the last GO the Guard passed for the
// request URL url, for the x402 client's before-payment hook to compare with
// RequirementsHash of what it is about to sign.
func (g *Guard) Checked(url string) (termsSHA256 string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.checked[url]
	return t, ok
}
