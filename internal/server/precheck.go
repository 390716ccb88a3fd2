package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// Precheck is the free pre-check answer: URL policy and assessability only.
// It never fetches the target and carries no verdict, state, factor or grade.
type Precheck struct {
	Service            string     `json:"service"`
	Version            string     `json:"version"`
	CriteriaID         string     `json:"criteria_id"`
	CriteriaRevision   string     `json:"criteria_revision"`
	Corpus             corpus.Ref `json:"corpus"`
	Op                 string     `json:"op"`
	PrecheckOp         string     `json:"precheck_op"`
	URL                string     `json:"url"`
	CheckedAt          string     `json:"checked_at"`
	InPolicy           bool       `json:"in_policy"`
	Assessability      string     `json:"assessability"`
	FreeCallsUsedToday int        `json:"free_calls_used_today"`
	FreeCallsPerDay    int        `json:"free_calls_per_day"`
	NoFundsProperty    string     `json:"no_funds_property,omitempty"`
	ProbeInventory     []string   `json:"probe_inventory,omitempty"`
	DisclosureSentence string     `json:"disclosure_sentence"`
	HonestyLine        string     `json:"honesty_line"`
	Retention          string     `json:"retention"`
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
	op := ops.OpProbe
	if service == criteria.ServicePayability {
		switch body.Op {
		case "", ops.OpCheck:
			op = ops.OpCheck
		case ops.OpMemo:
			op = ops.OpMemo
		default:
			s.count(route, "bad_request")
			writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed, "op must be check or memo."})
			return
		}
	} else if body.Op != "" && body.Op != ops.OpProbe {
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed, "op must be probe."})
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
	var key string
	if body.Caller == "" {
		key = "addr:" + addr
	} else {
		// The caller is free text up to the body cap: the store keeps its
		// SHA-256, a key of fixed size whatever the client sent.
		sum := sha256.Sum256([]byte(body.Caller))
		key = "wallet:" + hex.EncodeToString(sum[:])
	}
	doc, _ := criteria.ForService(service)
	now := s.cfg.Now()
	dec, err := s.cfg.Store.TakeFree(r.Context(), service+"|"+key, now, doc.FreeTier.PerDay,
		time.Duration(doc.FreeTier.MinIntervalMS)*time.Millisecond)
	if err != nil {
		s.cfg.Logger.Error("free tier failed", "route", route, "error", err.Error())
		s.count(route, "error")
		writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The free allowance could not be checked."})
		return
	}
	if !dec.Allowed {
		code := gate.CodeFreeMinInterval
		if dec.Reason == store.FreeDailyLimit {
			code = gate.CodeFreeDailyLimit
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
		Corpus: corpus.RefOf(service), Op: "precheck", PrecheckOp: op, URL: *body.URL,
		CheckedAt: criteria.Timestamp(now), InPolicy: true,
		FreeCallsUsedToday: dec.UsedToday, FreeCallsPerDay: doc.FreeTier.PerDay,
		DisclosureSentence: doc.DisclosureSentence, HonestyLine: doc.HonestyLine, Retention: doc.Retention,
	}
	switch op {
	case ops.OpCheck:
		p.Assessability = assessCheck
	case ops.OpMemo:
		p.Assessability = assessMemo
	case ops.OpProbe:
		p.Assessability = assessProbe
		p.NoFundsProperty = doc.NoFundsProperty
		for _, pr := range doc.ProbeInventory {
			p.ProbeInventory = append(p.ProbeInventory, pr.ID)
		}
	}
	signed, err := report.Sign(p, s.cfg.Key)
	if err != nil {
		s.count(route, "error")
		writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The answer could not be signed."})
		return
	}
	s.count(route, "ok")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Free-Calls-Remaining", strconv.Itoa(max(0, doc.FreeTier.PerDay-dec.UsedToday)))
	w.Write(signed)
}

// resourceOfPath is our URL for another path of this worker.
func (s *Server) resourceOfPath(r *http.Request, path string) string {
	u := *r.URL
	u.Path, u.RawPath, u.RawQuery = path, "", ""
	rr := *r
	rr.URL = &u
	return s.resourceOf(&rr)
}
