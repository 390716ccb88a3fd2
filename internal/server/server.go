// Package server is the HTTP surface of both services of the criteria:
// payability-verdict (check, memo) and rail-probe (probe). Handlers decode,
// ask the gate, run ops and render; they decide nothing themselves.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

// Which services a worker serves.
const (
	ServeAll = "all"
)

// DefaultFreePerSource is the default of Config.FreePerSource: the
// criteria's daily allowance of one wallet, for a whole source address.
const DefaultFreePerSource = 100

// Route prefixes when both services share one worker.
const (
	PrefixPayability = "/toll/payability"
	PrefixRailProbe  = "/toll/rail-probe"
)

// RequestBodyCap is the published request body cap (262,144 bytes): the
// criteria's input_contract.caps.body_bytes, written out so that start-up
// parses no criteria document (TestRequestBodyCapIsThePublishedOne).
const RequestBodyCap = 262144

// Config is everything a server needs; all of it is injected.
type Config struct {
	Service   string // ServeAll, criteria.ServicePayability or criteria.ServiceRailProbe
	PublicURL string // base URL clients see; "" means taken from the request
	Gate      *gate.Gate
	Runner    ops.Runner
	Key       report.Key
	KeySet    report.KeySet
	Store     store.Store
	Registry  *prometheus.Registry
	Now       func() time.Time
	Logger    *slog.Logger
	// HouseWallets are the operator's own wallets: their entries are house proofs.
	HouseWallets map[string]bool
	// OpTimeout bounds one paid op (the probe's seven fetches take at most 35 s).
	OpTimeout time.Duration
	// ClientLimiter is the coarse per-client-address limiter in front of the free tier.
	ClientLimiter *Limiter
	// FreePerSource is the ceiling of free pre-checks per source address
	// (IPv4 /32, IPv6 /64) and UTC day, all callers together, per service:
	// stricter than the criteria's per-wallet allowance, never looser.
	// Zero means DefaultFreePerSource.
	FreePerSource int
	// FreePerCallerX402 is x402-preflight's free allowance: pre-checks per
	// caller (wallet, else client address) and UTC day. The seed services'
	// allowance is their criteria's; this service has none published, so
	// the operator sets it. Zero means DefaultFreePerCallerX402.
	FreePerCallerX402 int
	// AllowPrivate says the fetcher reaches loopback and private targets;
	// without it a pre-check of a literal such address says it is refused.
	AllowPrivate bool
	// ReadyCorpus is false when the graders did not pass the pinned corpus at
	// start: paid ops are then refused (503) rather than sold.
	ReadyCorpus bool
	// StatusPage is true when a monitor serves GET /status on this server:
	// the web page then links to it.
	StatusPage bool
}

// Server serves both services.
type Server struct {
	cfg     Config
	mux     *routeMux
	metrics *metrics
	jwks    []byte
	docs    map[string][]byte
	web     *web
}

// New builds the handler of a worker.
func New(cfg Config) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 60 * time.Second
	}
	if cfg.ClientLimiter == nil {
		cfg.ClientLimiter = NewLimiter(2, 20, cfg.Now)
	}
	if cfg.Service == "" {
		cfg.Service = ServeAll
	}
	if cfg.FreePerSource <= 0 {
		cfg.FreePerSource = DefaultFreePerSource
	}
	if cfg.FreePerCallerX402 <= 0 {
		cfg.FreePerCallerX402 = DefaultFreePerCallerX402
	}
	jwks, err := report.MarshalJWKS(cfg.KeySet)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, mux: newRouteMux(), metrics: newMetrics(cfg.Registry), jwks: jwks, docs: map[string][]byte{}}
	registerLedgerMetrics(cfg.Registry, cfg)
	if s.web, err = newWeb(s); err != nil {
		return nil, err
	}
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		if s.docs[svc], err = corpus.Criteria(svc); err != nil {
			return nil, err
		}
	}
	if s.docs[criteria.ServiceX402Preflight], err = x402Documents(); err != nil {
		return nil, err
	}
	metricsHandler := promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{})
	s.mux.HandleFunc("GET /.well-known/jwks.json", s.handleJWKS)
	s.mux.Handle("GET /metrics", metricsHandler)
	switch cfg.Service {
	case ServeAll:
		s.routes(PrefixPayability, criteria.ServicePayability, metricsHandler)
		s.routes(PrefixRailProbe, criteria.ServiceRailProbe, metricsHandler)
		s.routes(PrefixX402, criteria.ServiceX402Preflight, metricsHandler)
	case criteria.ServicePayability, criteria.ServiceRailProbe, criteria.ServiceX402Preflight:
		s.routes("", cfg.Service, metricsHandler)
		s.routes(prefixOf(cfg.Service), cfg.Service, metricsHandler)
	default:
		return nil, errors.New("server: unknown service")
	}
	s.mux.HandleFunc("POST /", s.handleNotCovered)
	s.mux.HandleFunc("GET /", s.handleNotFound)
	return s, nil
}

func opsOf(service string) []string {
	switch service {
	case criteria.ServiceRailProbe:
		return []string{ops.OpProbe}
	case criteria.ServiceX402Preflight:
		return []string{ops.OpPreflight, ops.OpLint}
	}
	return []string{ops.OpCheck, ops.OpMemo}
}

func (s *Server) routes(prefix, service string, metricsHandler http.Handler) {
	if prefix != "" {
		s.mux.Handle("GET "+prefix+"/metrics", metricsHandler)
	}
	s.mux.HandleFunc("GET "+prefix+"/criteria", func(w http.ResponseWriter, r *http.Request) {
		s.count(prefix+"/criteria", "ok")
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.docs[service])
	})
	s.mux.HandleFunc("POST "+prefix+"/precheck", func(w http.ResponseWriter, r *http.Request) {
		s.handlePrecheck(w, r, service, prefix+"/precheck")
	})
	for _, op := range opsOf(service) {
		route := prefix + "/" + op
		h := s.withCORS(func(w http.ResponseWriter, r *http.Request) { s.handlePaid(w, r, op, route) })
		s.mux.HandleFunc("GET "+route, h) // GET also matches HEAD
		s.mux.HandleFunc("POST "+route, h)
	}
	s.webRoutes(prefix, service)
}

// ServeHTTP serves every route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(rec, r)
	// The log line names the route pattern and the status only: never the
	// query, the body, the payer or anything fetched.
	s.cfg.Logger.Info("request", "method", methodLabel(r.Method), "route", routeLabel(r), "status", rec.status,
		"ms", s.cfg.Now().Sub(start).Milliseconds())
}

// methodLabel is the method from a closed set: a client may send any token.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

func routeLabel(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	if i := strings.IndexByte(r.Pattern, ' '); i >= 0 {
		return r.Pattern[i+1:]
	}
	return r.Pattern
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

// Unwrap lets http.ResponseController reach the connection's writer (the
// paid delivery flushes its answer to learn whether it left).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) count(route, outcome string) {
	s.metrics.requests.WithLabelValues(route, outcome).Inc()
}

func (s *Server) handleJWKS(w http.ResponseWriter, _ *http.Request) {
	s.count("/.well-known/jwks.json", "ok")
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Write(s.jwks)
}

// problem is a free, closed-form error answer.
type problem struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Closed request-error codes of our own.
const (
	errBodyOverCap    = "request_body_over_cap"
	errBodyMalformed  = "request_malformed"
	errURLMissing     = "url_missing"
	errInternal       = "internal_error"
	errCorpusNotReady = "corpus_not_passing"
	errRateLimited    = "rate_limited"
	errContentType    = "content_type_unsupported"
	errCallerInvalid  = "caller_invalid"
)

var errMissingURL = errors.New("the request names no url")

// paidRequest is the body of POST /check, /memo and /probe.
type paidRequest struct {
	URL *string `json:"url"`
}

// precheckRequest is the body of POST /precheck.
type precheckRequest struct {
	URL    *string `json:"url"`
	Caller *string `json:"caller"`
	Op     string  `json:"op"`
}

// urlProblem renders a URL-policy refusal: free, and naming the rule.
func urlProblem(err error) problem {
	if p, ok := argProblem(err); ok {
		return p
	}
	var pe *target.PolicyError
	if errors.As(err, &pe) {
		return problem{pe.Rule, pe.Error()}
	}
	return problem{errURLMissing, "The request body must name the endpoint to check in \"url\"."}
}

func checkTargetURL(u *string) error {
	if u == nil {
		return errMissingURL
	}
	return target.CheckURL(*u)
}

// resourceOf is our own URL as the client called it: the challenge's resource.
func (s *Server) resourceOf(r *http.Request) string {
	base := strings.TrimRight(s.cfg.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + r.URL.RequestURI()
}

// clientAddr is the client the per-address limiter and the free tier's
// address key count: the IPv4 address, or the /64 of an IPv6 address (one
// host or site holds a whole /64 and may use any address in it).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

func writeChallenge(w http.ResponseWriter, r *http.Request, status int, c gate.Challenge, body []byte, retryAfter time.Duration) {
	w.Header().Set(gateHeader, c.Header)
	w.Header().Set("Content-Type", "application/json")
	// A challenge carries a fresh memo: no cache may answer with a stale one.
	w.Header().Set("Cache-Control", "no-store")
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

const gateHeader = "PAYMENT-REQUIRED"

func (s *Server) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	// The op outlives a client that hangs up: the payment is already claimed,
	// so finishing (and delivering or releasing) is the honest thing to do.
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.OpTimeout)
}
