package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
)

// The web page: server-rendered with html/template from embedded files, no
// framework, complete without JavaScript (web/static/page.js only turns the
// two forms into JSON calls of the API), and fetching nothing from any other
// origin.
//
//go:embed web
var webFS embed.FS

// web is the page's parsed template, static assets and start time.
type web struct {
	page    *template.Template
	css, js []byte
	started time.Time
	global  bool                    // the root routes are registered
	text    map[string]criteriaText // by service
}

func newWeb(s *Server) (*web, error) {
	page, err := template.ParseFS(webFS, "web/page.html.tmpl")
	if err != nil {
		return nil, err
	}
	css, err := webFS.ReadFile("web/static/page.css")
	if err != nil {
		return nil, err
	}
	js, err := webFS.ReadFile("web/static/page.js")
	if err != nil {
		return nil, err
	}
	text := map[string]criteriaText{}
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		var t criteriaText
		if err := json.Unmarshal(criteria.Raw(svc), &t); err != nil {
			return nil, err
		}
		text[svc] = t
	}
	// x402-preflight's sentences are ours (x402svc.go), in the same shape.
	var x402 criteriaText
	x402.Price.Basis, x402.PaymentIncludes, x402.Never = "per endpoint", x402Includes, x402Never
	x402.BoundaryStatement = x402Boundary
	x402.FreePrecheck = x402FreePre + " " + strconv.Itoa(s.cfg.FreePerCallerX402) + " per UTC day per caller wallet (or client address), at least 5,000 ms apart."
	text[criteria.ServiceX402Preflight] = x402
	s.describeOffers()
	return &web{page: page, css: css, js: js, started: s.cfg.Now(), text: text}, nil
}

// describeOffers puts the bazaar extension into each paid op's offer, from
// the same schemas the OpenAPI document publishes.
func (s *Server) describeOffers() {
	if s.cfg.Gate == nil {
		return
	}
	for op, o := range s.cfg.Gate.Offers {
		if o.Bazaar == nil {
			o.Bazaar = bazaarFor(op)
			s.cfg.Gate.Offers[op] = o
		}
	}
}

// webRoutes registers the page and the free routes beside it for a service
// served under prefix ("" for the bare paths of a single-service worker),
// and, the first time, the routes of the whole worker.
func (s *Server) webRoutes(prefix, service string) {
	if !s.web.global {
		s.web.global = true
		s.mux.HandleFunc("GET /{$}", s.handlePage(""))
		s.mux.HandleFunc("POST /precheck/page", s.handlePrecheckForm(""))
		s.mux.HandleFunc("POST /verify", s.handleVerify("/verify"))
		s.mux.HandleFunc("POST /verify/page", s.handleVerifyForm(""))
		// The machine documents are public and read-only: any origin may read them.
		s.mux.HandleFunc("GET /openapi.json", publicRead(s.handleOpenAPI))
		s.mux.HandleFunc("GET /.well-known/x402", publicRead(s.handleWellKnownX402))
		s.mux.HandleFunc("GET /.well-known/x402.json", publicRead(s.handleWellKnownX402JSON))
		s.mux.HandleFunc("GET /static/page.css", s.handleAsset("/static/page.css", "text/css; charset=utf-8", s.web.css))
		s.mux.HandleFunc("GET /static/page.js", s.handleAsset("/static/page.js", "text/javascript; charset=utf-8", s.web.js))
	}
	corpusFile := corpus.Raw(service)
	if service == criteria.ServiceX402Preflight {
		corpusFile = x402Corpora()
	}
	s.mux.HandleFunc("GET "+prefix+"/corpus", func(w http.ResponseWriter, r *http.Request) {
		s.count(prefix+"/corpus", "ok")
		w.Header().Set("Content-Type", "application/json")
		w.Write(corpusFile)
	})
	for _, op := range opsOf(service) {
		s.mux.HandleFunc("OPTIONS "+prefix+"/"+op, s.handlePreflight(prefix+"/"+op))
	}
	if prefix == "" {
		return // the root routes above are this service's
	}
	s.mux.HandleFunc("GET "+prefix+"/{$}", s.handlePage(service))
	s.mux.HandleFunc("POST "+prefix+"/precheck/page", s.handlePrecheckForm(service))
	s.mux.HandleFunc("POST "+prefix+"/verify", s.handleVerify(prefix+"/verify"))
	s.mux.HandleFunc("POST "+prefix+"/verify/page", s.handleVerifyForm(service))
}

func (s *Server) handleAsset(route, contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.count(route, "ok")
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(body)
	}
}

// pageData is everything the template renders.
type pageData struct {
	Title      string
	Root       string // "/" or a service root
	RootPath   string // "" or the service prefix, for form actions
	Services   []serviceView
	Ops        []opView
	StatusPage bool
	Precheck   *formResult
	Verify     *formResult
	// PrecheckURLs maps each op to its JSON pre-check route (page.js).
	PrecheckURLs string
	VerifyURL    string
	// PaidIn names what the ops are paid in: USDC on Solana, and on the
	// Base network of the EVM entry when it is offered.
	PaidIn string
}

type serviceView struct {
	Name, Root, CriteriaURL, CorpusURL, CorpusID, CorpusPin string
	HonestyLine, DisclosureSentence, Retention, Never       string
	Boundary, FreePrecheck                                  string
	Ops                                                     []opView
}

type opView struct {
	Op, Service, Route, Description string
	Label, Units, Basis             string
	Includes                        string
}

// formResult is the outcome of a form, rendered in the page.
type formResult struct {
	OK      bool
	Summary string
	Code    string
	Detail  string
	JSON    string // the signed answer, indented
}

// criteriaText is what the page reads from a criteria document beyond Doc.
type criteriaText struct {
	Price struct {
		Basis string `json:"basis"`
	} `json:"price"`
	PaymentIncludes   string `json:"payment_includes"`
	Never             string `json:"never"`
	BoundaryStatement string `json:"boundary_statement"`
	FreePrecheck      string `json:"free_precheck"`
	MemoOp            struct {
		Price struct {
			Basis string `json:"basis"`
		} `json:"price"`
		PaymentIncludes string `json:"payment_includes"`
	} `json:"memo_op"`
}

func (s *Server) pageData(service string) pageData {
	d := pageData{Title: "payability", Root: "/", StatusPage: s.cfg.StatusPage, VerifyURL: "/verify", PaidIn: "USDC on Solana"}
	if e := s.cfg.Gate.Terms.EVM; e != nil {
		d.PaidIn = "USDC on Solana, or on " + map[string]string{gate.Base.CAIP2: "Base", gate.BaseSepolia.CAIP2: "Base Sepolia"}[e.Network.CAIP2] +
			" (" + e.Network.CAIP2 + ") through the facilitator"
	}
	services := s.servedServices()
	if service != "" {
		services = []string{service}
		d.Root, d.RootPath = prefixOf(service)+"/", prefixOf(service)
		d.Title = "payability — " + service
		d.VerifyURL = prefixOf(service) + "/verify"
	}
	urls := map[string]string{}
	for _, svc := range services {
		doc := s.termsOf(svc)
		text := s.web.text[svc]
		v := serviceView{
			Name: svc, Root: prefixOf(svc) + "/", CriteriaURL: prefixOf(svc) + "/criteria", CorpusURL: prefixOf(svc) + "/corpus",
			CorpusID: doc.Corpus.ID, CorpusPin: doc.Corpus.SHA256,
			HonestyLine: doc.Honesty, DisclosureSentence: doc.Disclosure, Retention: doc.Retention,
			Never: text.Never, Boundary: text.BoundaryStatement, FreePrecheck: text.FreePrecheck,
		}
		for _, op := range opsOf(svc) {
			offer := s.cfg.Gate.Offers[op]
			basis, includes := text.Price.Basis, text.PaymentIncludes
			if op == "memo" {
				basis, includes = text.MemoOp.Price.Basis, text.MemoOp.PaymentIncludes
			}
			ov := opView{Op: op, Service: svc, Route: prefixOf(svc) + "/" + op, Description: offer.Description,
				Label: priceLabel(offer.Price), Units: strconv.FormatUint(offer.Price, 10), Basis: basis, Includes: includes}
			v.Ops = append(v.Ops, ov)
			d.Ops = append(d.Ops, ov)
			urls[op] = prefixOf(svc) + "/precheck"
		}
		d.Services = append(d.Services, v)
	}
	b, _ := json.Marshal(urls)
	d.PrecheckURLs = string(b)
	return d
}

func (s *Server) handlePage(service string) http.HandlerFunc {
	route := "/"
	if service != "" {
		route = prefixOf(service) + "/"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		s.count(route, "ok")
		w.Header().Add("Vary", "Accept")
		if wantsJSON(r) {
			// A client that asks for JSON gets the service roots, as a
			// path that is no route lists them, and where the contract is.
			roots := s.serviceRoots()
			if service != "" {
				roots = []string{prefixOf(service) + "/"}
			}
			w.Header().Set("Cache-Control", "no-store")
			writeJSON(w, http.StatusOK, rootIndex{Services: roots, OpenAPI: "/openapi.json"})
			return
		}
		s.renderPage(w, http.StatusOK, s.pageData(service))
	}
}

// rootIndex is GET / (or a service root) for a client that asks for JSON.
type rootIndex struct {
	Services []string `json:"services"`
	OpenAPI  string   `json:"openapi"`
}

// wantsJSON reports whether the Accept header names application/json and
// not text/html (a browser names text/html; curl's */* gets the page).
func wantsJSON(r *http.Request) bool {
	accept := strings.ToLower(r.Header.Get("Accept"))
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}

func (s *Server) renderPage(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := s.web.page.Execute(&buf, d); err != nil {
		s.cfg.Logger.Error("page failed", "error", err.Error())
		writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The page could not be rendered."})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// Nothing from another origin: no script, style, image, font or frame.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// sameOrigin reports whether a form post comes from a page of this worker:
// Sec-Fetch-Site when the browser sends it, else an Origin equal to ours. A
// request with neither is refused (a form in another site's page would carry
// one of them; a script or a command-line client uses the JSON API).
func (s *Server) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return false
	}
	base, err := url.Parse(s.baseURL(r))
	if err != nil {
		return false
	}
	return strings.EqualFold(origin, base.Scheme+"://"+base.Host)
}

// readForm reads an application/x-www-form-urlencoded body under the cap with
// only the named fields, each at most once. ok is false when an answer has
// been written.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request, route string, fields ...string) (url.Values, bool) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		s.count(route, "unsupported_media_type")
		writeJSON(w, http.StatusUnsupportedMediaType, problem{errContentType,
			"This route takes the page's form (application/x-www-form-urlencoded); scripts use the JSON route."})
		return nil, false
	}
	body, ok := s.readCapped(w, r, route)
	if !ok {
		return nil, false
	}
	v, err := url.ParseQuery(string(body))
	if err == nil {
		for k, vals := range v {
			if len(vals) != 1 || !slices.Contains(fields, k) {
				err = errBadForm
			}
		}
	}
	if err != nil {
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed, "The form must carry only its documented fields, each once."})
		return nil, false
	}
	return v, true
}

var errBadForm = errors.New("form fields")

// handlePrecheckForm is the page's pre-check without JavaScript: the form's
// fields become the JSON body of POST …/precheck, answered by the very same
// handler (its rules, allowance and signature), and the answer is rendered
// in the page. Only a same-origin form may use it, so no other site can
// spend a visitor's free allowance through it.
func (s *Server) handlePrecheckForm(service string) http.HandlerFunc {
	route := prefixOfPage(service) + "/precheck/page"
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.sameOrigin(r) {
			s.count(route, "cross_site")
			writeJSON(w, http.StatusForbidden, problem{errCrossSite,
				"This form route answers the page's own form only; scripts use POST …/precheck with a JSON body."})
			return
		}
		form, ok := s.readForm(w, r, route, "url", "op", "caller")
		if !ok {
			return
		}
		d := s.pageData(service)
		op := form.Get("op")
		if op == "" && len(d.Ops) > 0 {
			op = d.Ops[0].Op
		}
		var target string
		for _, o := range d.Ops {
			if o.Op == op {
				target = o.Service
			}
		}
		if target == "" {
			s.count(route, "bad_request")
			d.Precheck = &formResult{Code: errBodyMalformed, Detail: "op must be one of the ops this page offers."}
			s.renderPage(w, http.StatusBadRequest, d)
			return
		}
		req := struct {
			URL    *string `json:"url,omitempty"`
			Caller string  `json:"caller,omitempty"`
			Op     string  `json:"op,omitempty"`
		}{Caller: form.Get("caller"), Op: op}
		if u := form.Get("url"); u != "" {
			req.URL = &u
		}
		body, _ := json.Marshal(req)
		apiPath := prefixOf(target) + "/precheck"
		inner := r.Clone(r.Context())
		inner.URL = &url.URL{Path: apiPath}
		inner.RequestURI = apiPath
		inner.Header = r.Header.Clone()
		inner.Header.Set("Content-Type", "application/json")
		inner.Body = io.NopCloser(bytes.NewReader(body))
		inner.ContentLength = int64(len(body))
		rec := newRecorder()
		s.handlePrecheck(rec, inner, target, apiPath)
		d.Precheck = precheckResult(rec)
		// The pre-check's own answer headers travel with the page: the
		// paid challenge of an exhausted allowance, Retry-After, the
		// remaining free calls.
		for _, k := range []string{gateHeader, "Retry-After", "X-Free-Calls-Remaining"} {
			if v := rec.header.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		s.count(route, "ok")
		s.renderPage(w, rec.status, d)
	}
}

func prefixOfPage(service string) string {
	if service == "" {
		return ""
	}
	return prefixOf(service)
}

// precheckResult renders the pre-check's answer for the page.
func precheckResult(rec *recorder) *formResult {
	if rec.status == http.StatusOK {
		var indented bytes.Buffer
		if json.Indent(&indented, rec.body.Bytes(), "", "  ") != nil {
			indented.Reset()
			indented.Write(rec.body.Bytes())
		}
		var p struct {
			Assessability string `json:"assessability"`
		}
		_ = json.Unmarshal(rec.body.Bytes(), &p)
		return &formResult{OK: true, Summary: "In policy. " + p.Assessability, JSON: indented.String()}
	}
	var pr problem
	_ = json.Unmarshal(rec.body.Bytes(), &pr)
	res := &formResult{Code: pr.Error, Detail: pr.Detail}
	if rec.status == http.StatusPaymentRequired {
		res.Summary = "The free allowance is used up for now (" + pr.Error + "); the paid op's challenge is the answer's PAYMENT-REQUIRED header."
	} else {
		res.Summary = "Refused (HTTP " + strconv.Itoa(rec.status) + "): " + pr.Error
	}
	return res
}

// handleVerifyForm is the page's verifier without JavaScript: the pasted
// report is verified in memory and dropped; the page shows the outcome only.
func (s *Server) handleVerifyForm(service string) http.HandlerFunc {
	route := prefixOfPage(service) + "/verify/page"
	return func(w http.ResponseWriter, r *http.Request) {
		form, ok := s.readForm(w, r, route, "report")
		if !ok {
			return
		}
		v := s.verifyDoc([]byte(form.Get("report")))
		d := s.pageData(service)
		d.Verify = verifyResult(v)
		outcome := "verified"
		if !v.Verified {
			outcome = "not_verified"
		}
		s.count(route, outcome)
		s.renderPage(w, http.StatusOK, d)
	}
}

func verifyResult(v Verification) *formResult {
	if v.Verified {
		return &formResult{OK: true, Summary: "Verified: signed by this server's " + *v.Key + " key (kid " + *v.Kid + ")."}
	}
	return &formResult{Code: *v.Reason, Summary: "Not verified: " + *v.Reason + "."}
}

// recorder is an in-memory ResponseWriter for the form routes' inner call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, status: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.status = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
