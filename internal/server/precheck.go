package server

import (
	"encoding/hex"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mr-tron/base58"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

// Precheck is the free pre-check answer: URL policy and assessability only.
// It never fetches the target and carries no verdict, state, factor or grade.
type Precheck struct {
	Service          string     `json:"service"`
	Version          string     `json:"version"`
	CriteriaID       string     `json:"criteria_id"`
	CriteriaRevision string     `json:"criteria_revision"`
	Corpus           corpus.Ref `json:"corpus"`
	Op               string     `json:"op"`
	PrecheckOp       string     `json:"precheck_op"`
	URL              string     `json:"url"`
	CheckedAt        string     `json:"checked_at"`
	InPolicy         bool       `json:"in_policy"`
	Assessability    string     `json:"assessability"`
	// FreeCallsUsedToday is absent when the answer took no free call and
	// so did not read the caller's count (in_policy false).
	FreeCallsUsedToday *int `json:"free_calls_used_today,omitempty"`
	FreeCallsPerDay    int  `json:"free_calls_per_day"`
	// Rule names the refusal when InPolicy is false.
	Rule               string   `json:"rule,omitempty"`
	NoFundsProperty    string   `json:"no_funds_property,omitempty"`
	ProbeInventory     []string `json:"probe_inventory,omitempty"`
	DisclosureSentence string   `json:"disclosure_sentence"`
	HonestyLine        string   `json:"honesty_line"`
	Retention          string   `json:"retention"`
}

// Assessability lines: what a pre-check states, and all that it states.
const (
	assessCheck = "The URL is within the published target-URL policy. This pre-check did not fetch the endpoint and returns no verdict, no state and no factor; the paid check op grades the challenge."
	assessMemo  = "The URL is within the published target-URL policy. This pre-check did not fetch the endpoint and returns no verdict, no state and no factor; the paid memo op grades memo binding."
	assessProbe = "The URL is within the published target-URL policy. The endpoint is NOT probed by this pre-check and no grade is returned; the paid probe op sends the published probe inventory."
)

func (s *Server) handlePrecheck(w http.ResponseWriter, r *http.Request, service, route string) {
	var body precheckRequest
	if !s.readBody(w, r, route, &body) {
		return
	}
	op, detail := precheckOp(service, body.Op)
	if op == "" {
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed, detail})
		return
	}
	if body.Caller != nil && !solana.ValidAddress(*body.Caller) {
		s.count(route, "bad_request")
		s.metrics.free.WithLabelValues(service, "caller_invalid").Inc()
		writeJSON(w, http.StatusBadRequest, problem{errCallerInvalid, callerRule})
		return
	}
	if err := checkTargetURL(body.URL); err != nil {
		s.count(route, "bad_request")
		s.metrics.free.WithLabelValues(service, "url_refused").Inc()
		writeJSON(w, http.StatusBadRequest, urlProblem(err))
		return
	}
	addr := clientAddr(r)
	if !s.cfg.ClientLimiter.Allow(addr) {
		s.count(route, "rate_limited")
		s.metrics.free.WithLabelValues(service, "rate_limited").Inc()
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, problem{errRateLimited, "Too many free pre-checks from this address; slow down."})
		return
	}
	doc := s.termsOf(service)
	now := s.cfg.Now()
	if !s.cfg.AllowPrivate && literalNonPublic(*body.URL) {
		// The fetch guard would refuse the address: say so, free, rather
		// than offer (on exhaustion) a challenge for a fetch we would not
		// make.
		s.count(route, "address_refused")
		s.metrics.free.WithLabelValues(service, "address_refused").Inc()
		s.writePrecheck(w, route, Precheck{
			Service: doc.Service, Version: doc.Version, CriteriaID: doc.CriteriaID, CriteriaRevision: doc.CriteriaRevision,
			Corpus: doc.Corpus, Op: "precheck", PrecheckOp: op, URL: *body.URL,
			CheckedAt: criteria.Timestamp(now), InPolicy: false, Rule: ruleAddressRefused, Assessability: assessAddressRefused,
			FreeCallsPerDay:    doc.PerDay,
			DisclosureSentence: doc.Disclosure, HonestyLine: doc.Honesty, Retention: doc.Retention,
		}, -1)
		return
	}
	var key string
	if body.Caller == nil {
		key = "addr:" + addr
	} else {
		// The canonical key of a wallet is its 32 bytes, whatever spelling
		// of them was sent.
		raw, _ := base58.Decode(*body.Caller)
		key = "wallet:" + hex.EncodeToString(raw)
	}
	dec, err := s.cfg.Store.TakeFreeFrom(r.Context(), store.FreeTake{
		Key: service + "|" + key, Now: now, PerDay: doc.PerDay,
		MinInterval: doc.MinInterval,
		Source:      service + "|src:" + addr, SourcePerDay: s.cfg.FreePerSource,
	})
	if err != nil {
		s.cfg.Logger.Error("free tier failed", "route", route, "error", err.Error())
		s.count(route, "error")
		writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The free allowance could not be checked."})
		return
	}
	if !dec.Allowed {
		code := gate.CodeFreeMinInterval
		switch dec.Reason {
		case store.FreeDailyLimit:
			code = gate.CodeFreeDailyLimit
		case store.FreeSourceLimit:
			code = gate.CodeFreeSourceLimit
		}
		s.count(route, "free_exhausted")
		s.metrics.free.WithLabelValues(service, string(dec.Reason)).Inc()
		if !s.cfg.ReadyCorpus {
			// The paid ops are not sold: no challenge is offered instead.
			if dec.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((dec.RetryAfter+time.Second-1)/time.Second)))
			}
			writeJSON(w, http.StatusTooManyRequests, problem{string(code),
				"The free pre-check allowance is used up for now, and the paid ops are not served: the graders do not pass 100% of the pinned corpus."})
			return
		}
		// The exhaustion 402 carries the paid challenge of the op's own route.
		paid := r.URL.Path[:len(r.URL.Path)-len("precheck")] + op
		resource := s.resourceOfPath(r, paid)
		c, err := s.cfg.Gate.NewChallenge(op, resource, *body.URL)
		if err != nil {
			s.count(route, "error")
			writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The challenge could not be issued."})
			return
		}
		writeChallenge(w, r, http.StatusPaymentRequired, c, gate.RefusalBody(code, c), dec.RetryAfter)
		return
	}
	s.metrics.free.WithLabelValues(service, "allowed").Inc()
	p := Precheck{
		Service: doc.Service, Version: doc.Version, CriteriaID: doc.CriteriaID, CriteriaRevision: doc.CriteriaRevision,
		Corpus: doc.Corpus, Op: "precheck", PrecheckOp: op, URL: *body.URL,
		CheckedAt: criteria.Timestamp(now), InPolicy: true,
		FreeCallsUsedToday: &dec.UsedToday, FreeCallsPerDay: doc.PerDay,
		DisclosureSentence: doc.Disclosure, HonestyLine: doc.Honesty, Retention: doc.Retention,
	}
	switch op {
	case ops.OpCheck:
		p.Assessability = assessCheck
	case ops.OpMemo:
		p.Assessability = assessMemo
	case ops.OpProbe:
		p.Assessability = assessProbe
		rp := criteria.RailProbe()
		p.NoFundsProperty = rp.NoFundsProperty
		for _, pr := range rp.ProbeInventory {
			p.ProbeInventory = append(p.ProbeInventory, pr.ID)
		}
	case ops.OpPreflight:
		p.Assessability = assessPreflight
		p.NoFundsProperty = preflight.NoFundsProperty()
	case ops.OpLint:
		p.Assessability = assessLint
	}
	s.writePrecheck(w, route, p, max(0, doc.PerDay-dec.UsedToday))
}

// precheckOp is the op a pre-check of service pre-checks: the body's op,
// or the service's first op when it names none. "" and the sentence of the
// refusal when the op is not the service's.
func precheckOp(service, op string) (string, string) {
	offered := opsOf(service)
	if op == "" {
		return offered[0], ""
	}
	if slices.Contains(offered, op) {
		return op, ""
	}
	return "", "op must be " + strings.Join(offered, " or ") + "."
}

// writePrecheck signs and writes a pre-check answer; remaining < 0 sends no
// X-Free-Calls-Remaining (the answer took no free call).
func (s *Server) writePrecheck(w http.ResponseWriter, route string, p Precheck, remaining int) {
	signed, err := report.Sign(p, s.cfg.Key)
	if err != nil {
		s.count(route, "error")
		writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The answer could not be signed."})
		return
	}
	if remaining >= 0 {
		s.count(route, "ok")
		w.Header().Set("X-Free-Calls-Remaining", strconv.Itoa(remaining))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(signed)
}

// callerRule is the sentence of caller_invalid: the free allowance is
// counted per caller wallet (the criteria), so a caller is one.
const callerRule = "caller must be a Solana wallet address: base58 text of exactly 32 bytes (omit it to be counted by your address)."

// ruleAddressRefused is the rule a pre-check names for a URL whose host is
// a literal loopback, private or otherwise non-public address (or
// localhost) on a server that does not fetch such targets.
const ruleAddressRefused = "address_refused"

const assessAddressRefused = "The URL names a loopback, private or other non-public address, which this server does not fetch (it runs without --allow-private-targets): a paid op would only report the fetch as failed, so none is offered. This answer took no free call."

// literalNonPublic reports whether raw's host is an IP literal the fetch
// guard refuses, or localhost (RFC 6761: always loopback). An IPv4 literal
// is also one of the forms browsers and getaddrinfo read as an address
// (legacyIPv4: 0x7f000001, 0177.0.0.1, 2130706433, 127.1). A name that
// resolves to such an address is refused at fetch time, not here: the
// pre-check resolves nothing.
func literalNonPublic(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		if ip, ok = legacyIPv4(host); !ok {
			return false
		}
	}
	return !target.AddressAllowed(ip)
}

// legacyIPv4 parses the IPv4 forms of the WHATWG URL standard's IPv4 parser
// (§4.4) and inet_aton: one to four dot-separated numbers, each decimal, hex
// (0x…) or octal (a leading 0), the last filling the remaining bytes. It
// reports false for anything else (a name, a number too large).
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
			if p == "" {
				p = "0" // "0x" is zero (WHATWG)
			}
		case len(p) >= 2 && p[0] == '0':
			p, base = p[1:], 8
		}
		n, err := strconv.ParseUint(p, base, 32)
		if p == "" || err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// resourceOfPath is our URL for another path of this worker.
func (s *Server) resourceOfPath(r *http.Request, path string) string {
	u := *r.URL
	u.Path, u.RawPath, u.RawQuery = path, "", ""
	rr := *r
	rr.URL = &u
	return s.resourceOf(&rr)
}
