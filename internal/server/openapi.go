package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
)

// The OpenAPI 3.1 document of this worker (GET /openapi.json): every route
// it serves, the 402 answers of the paid ops with their PAYMENT-REQUIRED
// header, and x-payment-info per paid op in x402scan's discovery shape
// (Merit-Systems/x402scan docs/DISCOVERY.md, "OpenAPI-First Discovery": price
// {mode, currency, amount} and protocols). It is built per request from the
// same configuration as the router; a test holds the two together.

// apiOp is one operation of the document.
type apiOp struct {
	method, path string
	op           schema
}

func jsonContent(s schema) schema {
	return schema{"application/json": schema{"schema": s}}
}

func htmlContent() schema {
	return schema{"text/html": schema{"schema": str()}}
}

func resp(desc string, content schema) schema {
	r := schema{"description": desc}
	if content != nil {
		r["content"] = content
	}
	return r
}

func problemResp(desc string) schema { return resp(desc, jsonContent(problemSchema())) }

// operationID is a unique id derived from the method and path.
func operationID(method, path string) string {
	id := strings.NewReplacer("/", "_", ".", "_", "-", "_", "{", "", "}", "").Replace(strings.Trim(path, "/"))
	if id == "" {
		id = "root"
	}
	return strings.ToLower(method) + "_" + id
}

func free(summary string, responses schema) schema {
	return schema{"summary": summary, "security": []any{}, "responses": responses}
}

func (s *Server) apiOps() []apiOp {
	var out []apiOp
	add := func(method, path string, op schema) {
		op["operationId"] = operationID(method, path)
		out = append(out, apiOp{method, path, op})
	}
	page := func(summary string) schema {
		content := htmlContent()
		content["application/json"] = schema{"schema": object([]string{"services", "openapi"},
			schema{"services": arrayOf(str()), "openapi": str()})}
		return free(summary, schema{"200": resp("The page (HTML); with Accept: application/json (and not text/html), the service roots and where this document is.", content)})
	}
	precheckForm := func(summary string) schema {
		op := free(summary, schema{
			"200": resp("The page with the signed pre-check answer.", htmlContent()),
			"400": resp("The page with the refusal naming the rule, or a malformed form.", htmlContent()),
			"402": schema{"description": "The page saying the free allowance is used up, with the paid op's challenge header.",
				"headers": schema{gateHeader: schema{"required": true, "schema": str()}}, "content": htmlContent()},
			"403": problemResp("cross_site_refused: the form was not posted by a page of this worker."),
			"413": problemResp("request_body_over_cap"),
			"415": problemResp("content_type_unsupported: not a form post."),
			"429": resp("The page saying the client is rate limited.", htmlContent()),
		})
		op["description"] = "The page's pre-check form without JavaScript: the fields become the JSON body of POST …/precheck and are answered by it. Only a same-origin form post (Sec-Fetch-Site, else Origin) is taken, so no other site can spend a visitor's free allowance."
		op["requestBody"] = schema{"required": true, "content": schema{"application/x-www-form-urlencoded": schema{"schema": schema{
			"type": "object", "properties": schema{"url": str(), "op": str(), "caller": str()}, "additionalProperties": false}}}}
		return op
	}
	verifyForm := func(summary string) schema {
		op := free(summary, schema{
			"200": resp("The page saying whether the report verified.", htmlContent()),
			"400": problemResp("request_malformed"), "413": problemResp("request_body_over_cap"),
			"415": problemResp("content_type_unsupported: not a form post."),
		})
		op["requestBody"] = schema{"required": true, "content": schema{"application/x-www-form-urlencoded": schema{"schema": schema{
			"type": "object", "properties": schema{"report": str()}, "required": []string{"report"}, "additionalProperties": false}}}}
		return op
	}
	verify := func(summary string) schema {
		op := free(summary, schema{
			"200": resp("Whether the body carries a valid signature by one of this server's keys.", jsonContent(verificationSchema())),
			"413": problemResp("request_body_over_cap"),
			"415": problemResp("content_type_unsupported: the body must be sent as application/json."),
		})
		op["description"] = "Verifies a signed report or pre-check answer against this server's JWKS. The body is verified in memory and never stored."
		op["requestBody"] = schema{"required": true, "content": jsonContent(freeObject("a signed report or pre-check answer"))}
		return op
	}

	add(http.MethodGet, "/", page("The web page: what is sold, at what price, under which criteria; the free pre-check and the report verifier."))
	add(http.MethodPost, "/precheck/page", precheckForm("The page's pre-check form (no JavaScript)."))
	add(http.MethodPost, "/verify", verify("Verify a signed report."))
	add(http.MethodPost, "/verify/page", verifyForm("The page's verifier form (no JavaScript)."))
	add(http.MethodGet, "/openapi.json", free("This document.", schema{"200": resp("OpenAPI 3.1.", jsonContent(freeObject("OpenAPI 3.1 document")))}))
	add(http.MethodGet, "/.well-known/x402", free("x402 discovery, x402scan's fan-out shape: every paid resource URL.", schema{"200": resp("The fan-out document.",
		jsonContent(object([]string{"version", "resources"}, schema{"version": schema{"type": "integer", "const": 1}, "resources": arrayOf(str())})))}))
	add(http.MethodGet, "/.well-known/x402.json", free("x402 discovery, the x402 draft's per-origin manifest: one item per paid resource.", schema{"200": resp("The manifest.",
		jsonContent(object([]string{"x402Version", "lastUpdated", "items"}, schema{"x402Version": schema{"type": "integer", "const": 2},
			"lastUpdated": integer(), "items": arrayOf(freeObject("resource, type, accepts (advisory, no memo), input, output"))})))}))
	add(http.MethodGet, "/.well-known/jwks.json", free("The signing keys (RFC 8037 OKP/Ed25519, kid = RFC 7638 thumbprint), retired ones included.",
		schema{"200": resp("The key set.", schema{"application/jwk-set+json": schema{"schema": object([]string{"keys"}, schema{"keys": arrayOf(freeObject("a JWK"))})}})}))
	add(http.MethodGet, "/metrics", free("Prometheus metrics.", schema{"200": resp("Prometheus text exposition.", schema{"text/plain": schema{"schema": str()}})}))
	add(http.MethodGet, "/static/page.css", free("The page's stylesheet.", schema{"200": resp("CSS.", schema{"text/css": schema{"schema": str()}})}))
	add(http.MethodGet, "/static/page.js", free("The page's script (progressive enhancement).", schema{"200": resp("JavaScript.", schema{"text/javascript": schema{"schema": str()}})}))

	prefixes := []struct{ prefix, service string }{}
	for _, svc := range s.servedServices() {
		if s.cfg.Service != ServeAll {
			prefixes = append(prefixes, struct{ prefix, service string }{"", svc})
		}
		prefixes = append(prefixes, struct{ prefix, service string }{prefixOf(svc), svc})
	}
	for _, p := range prefixes {
		svc := p.service
		if svc == criteria.ServiceX402Preflight {
			add(http.MethodGet, p.prefix+"/criteria", free("The "+svc+" documents: {\"x402-preflight/v1\": …, \"x402-lint/v1\": …}, each as payability criteria x402-preflight and x402-lint print it (corpus.sha256 set to the pin of the embedded corpus).",
				schema{"200": resp("The two documents.", jsonContent(closedObject([]string{"x402-preflight/v1", "x402-lint/v1"},
					schema{"x402-preflight/v1": freeObject("the x402-preflight/v1 document"), "x402-lint/v1": freeObject("the x402-lint/v1 rules")})))}))
			add(http.MethodGet, p.prefix+"/corpus", free("The "+svc+" corpora the graders pass at 100%, by corpus id; their pins are in the documents.",
				schema{"200": resp("The two corpus files.", jsonContent(freeObject("corpus files by id (docs/corpus-format.md)")))}))
		} else {
			add(http.MethodGet, p.prefix+"/criteria", free("The "+svc+" criteria document (corpus.sha256 set to the pin of the embedded corpus).",
				schema{"200": resp("The criteria document.", jsonContent(freeObject("criteria document")))}))
			add(http.MethodGet, p.prefix+"/corpus", free("The "+svc+" corpus the graders pass at 100%; its pin is in the criteria document.",
				schema{"200": resp("The corpus file.", jsonContent(freeObject("corpus file (docs/corpus-format.md)")))}))
		}
		pre := free("Free pre-check ("+svc+"): URL policy and assessability only, signed; never fetches the target.", schema{
			"200": resp("The signed pre-check answer.", jsonContent(precheckSchema(svc))),
			"400": problemResp("request_malformed, url_missing, caller_invalid, or the URL-policy rule that refused the URL; free."),
			"402": s.challengeResponse("The free allowance is used up (free_daily_limit or free_min_interval): the paid op's challenge."),
			"413": problemResp("request_body_over_cap"),
			"415": problemResp("content_type_unsupported: the body must be sent as application/json."),
			"429": problemResp("rate_limited"),
		})
		pre["requestBody"] = schema{"required": true, "content": jsonContent(precheckBodySchema(svc))}
		terms := s.termsOf(svc)
		source := "the criteria's free_tier"
		if svc == criteria.ServiceX402Preflight {
			source = "the operator's --free-per-caller-x402"
		}
		pre["description"] = "Free allowance (" + source + "): " + strconv.Itoa(terms.PerDay) + " per UTC day per caller wallet, at least " +
			strconv.FormatInt(terms.MinInterval.Milliseconds(), 10) + " ms apart; 402 with the paid challenge on exhaustion."
		add(http.MethodPost, p.prefix+"/precheck", pre)
		for _, op := range opsOf(svc) {
			route := p.prefix + "/" + op
			add(http.MethodGet, route, s.paidOp(op, false))
			add(http.MethodHead, route, s.paidOp(op, false))
			add(http.MethodPost, route, s.paidOp(op, true))
			add(http.MethodOptions, route, free("CORS preflight of the paid route.", schema{"204": schema{"description": "CORS preflight answer.",
				"headers": schema{
					"Access-Control-Allow-Origin":   schema{"schema": str()},
					"Access-Control-Allow-Methods":  schema{"schema": str()},
					"Access-Control-Allow-Headers":  schema{"schema": str()},
					"Access-Control-Expose-Headers": schema{"schema": str()},
				}}}))
		}
		if p.prefix == "" {
			continue
		}
		add(http.MethodGet, p.prefix+"/metrics", free("Prometheus metrics.", schema{"200": resp("Prometheus text exposition.", schema{"text/plain": schema{"schema": str()}})}))
		add(http.MethodGet, p.prefix+"/", page("The "+svc+" page."))
		add(http.MethodPost, p.prefix+"/precheck/page", precheckForm("The "+svc+" page's pre-check form (no JavaScript)."))
		add(http.MethodPost, p.prefix+"/verify", verify("Verify a signed report."))
		add(http.MethodPost, p.prefix+"/verify/page", verifyForm("The "+svc+" page's verifier form (no JavaScript)."))
	}
	return out
}

// challengeResponse is a 402 with our challenge: the v1 JSON body and the
// v2 PAYMENT-REQUIRED header.
func (s *Server) challengeResponse(desc string) schema {
	return schema{
		"description": desc,
		"headers": schema{
			gateHeader: schema{"required": true, "description": "x402 v2 PaymentRequired: standard padded base64 of JSON, with the bazaar extension.",
				"schema": pattern(`^[A-Za-z0-9+/]+={0,2}$`)},
			"Cache-Control": schema{"required": true, "schema": strConst("no-store")},
		},
		"content": jsonContent(challengeBodySchema()),
	}
}

// paidOp is a paid route's operation.
func (s *Server) paidOp(op string, post bool) schema {
	offer := s.cfg.Gate.Offers[op]
	responses := schema{
		"402": s.challengeResponse("Payment required: our challenge (a fresh memo bound to the named URL). A refused payment adds error and detail; payment_not_found, chain_unavailable and settlement_pending carry Retry-After."),
		"503": problemResp("corpus_not_passing: paid ops are not sold."),
	}
	o := schema{
		"summary":        offer.Description,
		"x-payment-info": s.paymentInfo(offer),
		"responses":      responses,
	}
	if !post {
		o["description"] = "Without payment: the challenge, not bound to a URL. With payment: refused like a POST {} (a GET names no URL)."
		return o
	}
	responses["200"] = resp("The signed report with payment and price.", jsonContent(reportSchema(op)))
	responses["400"] = problemResp("request_malformed, url_missing, or the URL-policy rule that refused the URL; free, the payment is not consumed.")
	if op == ops.OpPreflight || op == ops.OpLint {
		responses["400"] = problemResp("request_malformed, url_missing, the URL-policy rule that refused the URL, or method_invalid, body_invalid, network_invalid, max_amount_invalid; free, the payment is not consumed.")
	}
	responses["409"] = problemResp("payment_in_progress: another request holds this payment (Retry-After).")
	responses["413"] = problemResp("request_body_over_cap")
	responses["415"] = problemResp("content_type_unsupported: the body must be sent as application/json.")
	responses["500"] = problemResp("internal_error: the same payment resumes once at no charge.")
	o["requestBody"] = schema{"required": true, "content": jsonContent(paidBodySchema(op))}
	o["description"] = "Pay with the direct rail (X-Payment-Tx and X-Payment-Memo) or the facilitator rail (PAYMENT-SIGNATURE, x402 v2; X-PAYMENT, v1). One payment pays once."
	return o
}

// paymentInfo is x402scan's x-payment-info of an offer: a fixed USD price in
// decimal dollars (its docs: "decimal USD"), and the x402 protocol with the
// terms a wallet pays in (network, asset, amount in atomic units).
func (s *Server) paymentInfo(o gate.Offer) schema {
	var protocols []any
	for _, r := range s.cfg.Gate.Terms.Requirements(o) {
		protocols = append(protocols, schema{"x402": schema{
			"version": 2, "scheme": "exact", "network": r.Network, "asset": r.Asset, "amount": r.Amount,
		}})
	}
	return schema{
		"price":     schema{"mode": "fixed", "currency": "USD", "amount": usdDecimal(o.Price)},
		"protocols": protocols,
	}
}

// usdDecimal writes USDC units (6 decimals) as a decimal dollar amount.
func usdDecimal(units uint64) string {
	frac := strconv.FormatUint(units%1_000_000+1_000_000, 10)[1:]
	return strconv.FormatUint(units/1_000_000, 10) + "." + frac
}

// OpenAPI is the document, with base as its server URL.
func (s *Server) OpenAPI(base string) schema {
	paths := schema{}
	for _, o := range s.apiOps() {
		item, _ := paths[o.path].(schema)
		if item == nil {
			item = schema{}
			paths[o.path] = item
		}
		item[strings.ToLower(o.method)] = o.op
	}
	return schema{
		"openapi": "3.1.0",
		"info": schema{
			"title":   "payability",
			"version": buildinfo.Version,
			"description": "payability grades x402 payment endpoints against published criteria and answers with signed reports. " +
				"Any other GET path answers 404 not_found listing the service roots (components.schemas.NotFound); any other POST path answers 404 NOT COVERED naming where an op lives (components.schemas.NotCovered).",
			"x-guidance": "POST {\"url\": …} to a paid route; pay the 402 challenge (x402, USDC on Solana) and repeat the request with the payment headers. " +
				"POST …/precheck first for a free, signed URL-policy answer. Verify any report at POST /verify.",
		},
		"servers": []any{schema{"url": base}},
		"paths":   paths,
		"components": schema{"schemas": schema{
			// The two fallbacks are no path of their own.
			"NotFound":   notFoundSchema(),
			"NotCovered": notCoveredSchema(),
		}},
	}
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	s.count("/openapi.json", "ok")
	writeJSON(w, http.StatusOK, s.OpenAPI(s.baseURL(r)))
}
