package server

import (
	"encoding/json"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
)

// The JSON Schemas (draft 2020-12, the dialect of OpenAPI 3.1) of what the
// API takes and answers, after docs/report-format.md and docs/api.md. Each is
// self-contained (no $ref), so the same schema serves the OpenAPI document and
// the bazaar extension of our challenges, which allows same-document
// references only.

type schema = map[string]any

func str() schema                   { return schema{"type": "string"} }
func strEnum(v ...string) schema    { return schema{"type": "string", "enum": v} }
func strConst(v string) schema      { return schema{"type": "string", "const": v} }
func nullable(t string) schema      { return schema{"type": []string{t, "null"}} }
func boolean() schema               { return schema{"type": "boolean"} }
func integer() schema               { return schema{"type": "integer"} }
func arrayOf(items schema) schema   { return schema{"type": "array", "items": items} }
func pattern(p string) schema       { return schema{"type": "string", "pattern": p} }
func freeObject(desc string) schema { return schema{"type": "object", "description": desc} }

func object(required []string, props schema) schema {
	return schema{"type": "object", "properties": props, "required": required}
}

func closedObject(required []string, props schema) schema {
	o := object(required, props)
	o["additionalProperties"] = false
	return o
}

const (
	timePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`
	hexPin      = `^[0-9a-f]{64}$`
	digits      = `^[0-9]+$`
	caip2       = `^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$` // CAIP-2, as store.IsCAIP2 reads it
)

// urlBodySchema is the body of a paid route: {"url": …}, nothing else.
func urlBodySchema() schema {
	return closedObject([]string{"url"}, schema{
		"url": schema{"type": "string", "format": "uri", "description": "the endpoint to grade (http or https, no credentials)"},
	})
}

// precheckBodySchema is the body of POST …/precheck.
func precheckBodySchema(service string) schema {
	opEnum := opsOf(service)
	return closedObject([]string{"url"}, schema{
		"url":    schema{"type": "string", "format": "uri"},
		"caller": schema{"type": "string", "description": "the caller's Solana wallet (base58): the free allowance is counted per caller wallet"},
		"op":     strEnum(opEnum...),
	})
}

func signatureSchema() schema {
	return closedObject([]string{"alg", "kid", "value"}, schema{
		"alg": strConst("Ed25519"), "kid": str(), "value": pattern(`^[A-Za-z0-9_-]+$`),
	})
}

// envelopeProps are the common fields of every report (docs/report-format.md).
func envelopeProps(service string) schema {
	doc := termsOf(service, 0)
	return schema{
		"service":             strConst(doc.Service),
		"version":             str(),
		"criteria_id":         str(),
		"criteria_revision":   str(),
		"corpus":              closedObject([]string{"id", "sha256"}, schema{"id": str(), "sha256": pattern(hexPin)}),
		"op":                  str(),
		"url":                 str(),
		"checked_at":          pattern(timePattern),
		"verdict_line":        str(),
		"disclosure_sentence": str(),
		"honesty_line":        str(),
		"retention":           str(),
		"signature":           signatureSchema(),
	}
}

var envelopeRequired = []string{"service", "version", "criteria_id", "criteria_revision", "corpus", "op", "url",
	"checked_at", "verdict_line", "disclosure_sentence", "honesty_line", "retention", "signature"}

// reportSchema is the signed report of a paid op, with its payment and price.
func reportSchema(op string) schema {
	if op == ops.OpPreflight || op == ops.OpLint {
		return x402ReportSchema(op)
	}
	service := serviceOfOp(op)
	props := envelopeProps(service)
	props["op"] = strConst(op)
	props["payment"] = closedObject([]string{"rail", "network", "tx", "resumed"}, schema{
		"rail": strEnum(gate.RailDirect, gate.RailFacilitator), "network": pattern(caip2), "tx": str(), "resumed": boolean(),
	})
	props["price"] = closedObject([]string{"usdc_units", "label"}, schema{"usdc_units": pattern(digits), "label": str()})
	required := append([]string{}, envelopeRequired...)
	required = append(required, "payment", "price")
	pv, rp := criteria.Payability(), criteria.RailProbe()
	switch op {
	case ops.OpCheck:
		props["state"] = strEnum(pv.States...)
		props["factors"] = freeObject("the field-check factors of docs/report-format.md; booleans and integers are null where the readings say so")
		required = append(required, "state", "factors")
	case ops.OpMemo:
		props["state"] = strEnum(pv.MemoOp.States...)
		props["reason"] = nullable("string")
		props["factors"] = freeObject("the memo-binding factors of docs/report-format.md; never a memo value")
		required = append(required, "state", "factors")
	case ops.OpProbe:
		grade := object([]string{"grade"}, schema{"grade": strEnum(append(append([]string{}, rp.Grades...), "UNGRADED")...),
			"reason": nullable("string"), "status": nullable("integer"), "fail_open": nullable("boolean")})
		props["outcome"] = str()
		props["grades"] = object([]string{"direct", "facilitator"}, schema{"direct": grade, "facilitator": grade, "missing_memo": grade, "bogus": grade})
		props["probes"] = arrayOf(object([]string{"id", "method", "outcome"}, schema{"id": str(), "method": str(), "status": nullable("integer"), "outcome": str()}))
		props["methods"] = freeObject("per method: status, gated, unpaid_2xx")
		props["exposures"] = arrayOf(freeObject("an exposure finding"))
		props["no_funds_property"] = str()
		required = append(required, "outcome", "grades", "probes", "methods", "exposures", "no_funds_property")
	}
	return schema{"type": "object", "properties": props, "required": required,
		"description": "A signed " + op + " report (docs/report-format.md): RFC 8785 canonical JSON with an Ed25519 signature over the document without its signature member."}
}

// precheckSchema is the signed free pre-check answer.
func precheckSchema(service string) schema {
	props := envelopeProps(service)
	delete(props, "verdict_line")
	props["op"] = strConst("precheck")
	props["precheck_op"] = str()
	props["in_policy"] = strConstBool(true)
	props["assessability"] = str()
	props["free_calls_used_today"] = integer()
	props["free_calls_per_day"] = integer()
	switch service {
	case criteria.ServiceRailProbe:
		props["no_funds_property"] = str()
		props["probe_inventory"] = arrayOf(str())
	case criteria.ServiceX402Preflight:
		props["no_funds_property"] = str()
	}
	required := []string{}
	for _, f := range envelopeRequired {
		if f != "verdict_line" {
			required = append(required, f)
		}
	}
	required = append(required, "precheck_op", "in_policy", "assessability", "free_calls_used_today", "free_calls_per_day")
	return schema{"type": "object", "properties": props, "required": required,
		"description": "The signed free pre-check answer: URL policy and assessability only; never a verdict, state, factor or grade."}
}

func strConstBool(v bool) schema { return schema{"type": "boolean", "const": v} }

func problemSchema() schema {
	return object([]string{"error", "detail"}, schema{"error": str(), "detail": str()})
}

// challengeBodySchema is the v1 JSON body of our 402 (a refusal adds error
// and detail beside the challenge fields).
func challengeBodySchema() schema {
	req := object([]string{"scheme", "network", "amount", "maxAmountRequired", "asset", "payTo", "resource", "maxTimeoutSeconds", "extra"}, schema{
		"scheme": strConst("exact"), "network": str(), "amount": pattern(digits), "maxAmountRequired": pattern(digits),
		"asset": str(), "payTo": str(), "resource": str(), "description": str(), "mimeType": str(),
		"maxTimeoutSeconds": integer(),
		"extra":             object([]string{"usdc_token_account", "memo"}, schema{"usdc_token_account": str(), "memo": str(), "feePayer": str()}),
	})
	return object([]string{"x402Version", "accepts", "memo"}, schema{
		"x402Version": schema{"type": "integer", "const": 1}, "accepts": schema{"type": "array", "items": req, "minItems": 1},
		"memo": str(), "error": str(), "detail": str(),
	})
}

func verificationSchema() schema {
	return closedObject([]string{"verified", "kid", "key", "reason"}, schema{
		"verified": boolean(), "kid": nullable("string"),
		"key":    schema{"type": []string{"string", "null"}, "enum": []any{"current", "retired", nil}},
		"reason": schema{"type": []string{"string", "null"}, "enum": []any{"malformed", "no_signature", "bad_alg", "unknown_kid", "bad_signature", nil}},
	})
}

func notFoundSchema() schema {
	return object([]string{"error", "detail", "services"}, schema{"error": strConst("not_found"), "detail": str(), "services": arrayOf(str())})
}

func notCoveredSchema() schema {
	return object([]string{"error", "detail", "ops", "services"}, schema{"error": strConst("NOT COVERED"), "detail": str(),
		"ops": arrayOf(str()), "services": arrayOf(str()), "routes": arrayOf(str())})
}

// exampleFields are the report fields the bazaar example carries: enough
// to show the shape, small enough for a header (the long criteria sentences
// are in every real report and in the OpenAPI document's schema).
var exampleFields = []string{"service", "op", "url", "checked_at", "verdict_line"}

// bazaarOutputSchema is the bazaar example's schema: plain types only, to
// keep the header small (the OpenAPI document has the full report schema).
func bazaarOutputSchema(op string) schema {
	if op == ops.OpPreflight || op == ops.OpLint {
		return x402BazaarOutputSchema(op)
	}
	props := schema{}
	for _, f := range exampleFields {
		props[f] = str()
	}
	if op == ops.OpProbe {
		props["outcome"] = str()
	} else {
		props["state"] = str()
	}
	return schema{"type": "object", "properties": props, "required": exampleFields}
}

// bazaarBodySchema is the bazaar body's schema: urlBodySchema without its
// prose.
func bazaarBodySchema() schema {
	return closedObject([]string{"url"}, schema{"url": str()})
}

// exampleBody is the example request body of a paid route.
var exampleBody = map[string]string{"url": "https://api.example.com/paid"}

// exampleReport is an example answer of a paid op: the exampleFields of a
// report, with the op's first listed state or a probe outcome,
// rendered from the criteria's own grammar. It is marked as an example by
// the URL and the fixed time; it is not signed.
func exampleReport(op string) map[string]any {
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if op == ops.OpPreflight || op == ops.OpLint {
		return x402ExampleReport(op, end)
	}
	pv, rp := criteria.Payability(), criteria.RailProbe()
	var line string
	extra := map[string]any{}
	switch op {
	case ops.OpCheck:
		line = criteria.CheckLine(pv.States[0], end)
		extra["state"] = pv.States[0]
	case ops.OpMemo:
		line = criteria.MemoLine(pv.MemoOp.States[0], end)
		extra["state"] = pv.MemoOp.States[0]
	case ops.OpProbe:
		line = criteria.ProbeLine(rp.Grades[0], rp.Grades[0], end)
		extra["outcome"] = "PROBED"
	}
	raw, _ := json.Marshal(ops.NewEnvelope(op, exampleBody["url"], end, line))
	all := map[string]any{}
	_ = json.Unmarshal(raw, &all)
	for _, f := range exampleFields {
		extra[f] = all[f]
	}
	return extra
}

// bazaarFor is the bazaar extension of a paid op's challenges.
func bazaarFor(op string) *gate.Bazaar {
	body, _ := json.Marshal(bazaarBodySchemaOf(op))
	out, _ := json.Marshal(bazaarOutputSchema(op))
	return &gate.Bazaar{Body: exampleBody, BodySchema: body, Output: exampleReport(op), OutputSchema: out}
}
