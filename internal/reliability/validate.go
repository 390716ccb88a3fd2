package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Status is a record's status, one of the four documented values.
type Status string

// The documented statuses.
const (
	StatusOperational Status = "operational"
	StatusDegraded    Status = "degraded"
	StatusCritical    Status = "critical"
	StatusUnknown     Status = "unknown"
)

// BaseChainID is the chain id of Base mainnet, the only chain this client binds.
const BaseChainID = 8453

// Record is a CORTX reliability record after validation. It is meaningful only
// when Validate returned no findings: a field that failed is left at its zero
// value, and a status that failed is StatusUnknown.
//
// The binding fields (EndpointURL, ChainID, TokenAddress, PayeeAddress) are
// optional here: a record may validate without them, and Bind then reports
// each one missing.
type Record struct {
	Status                Status    `json:"status"`
	EndpointURL           string    `json:"endpoint_url"`
	ChainID               int64     `json:"chain_id"`
	TokenAddress          string    `json:"token_address"`
	PayeeAddress          string    `json:"payee_address"`
	UptimePercent         float64   `json:"uptime_percent"`
	PaidDeliveryPercent   float64   `json:"paid_delivery_percent"`
	SchemaValidityPercent float64   `json:"schema_validity_percent"`
	MedianLatencyMs       float64   `json:"median_latency_ms"`
	LastVerifiedAt        time.Time `json:"last_verified_at"`
	ActiveIncident        *Incident `json:"active_incident"`
}

// Incident is an open incident. Severity and FailureStage are the strings as
// received: data, never instructions. Only their Label form is ever printed.
type Incident struct {
	Severity     string
	FailureStage string
	OpenedAt     time.Time
}

// The documented fields, in the order findings about them are reported.
const (
	FieldResponse       = "response"
	FieldStatus         = "status"
	FieldEndpointURL    = "endpoint_url"
	FieldChainID        = "chain_id"
	FieldTokenAddress   = "token_address"
	FieldPayeeAddress   = "payee_address"
	FieldUptime         = "uptime_percent"
	FieldPaidDelivery   = "paid_delivery_percent"
	FieldSchemaValidity = "schema_validity_percent"
	FieldLatency        = "median_latency_ms"
	FieldLastVerified   = "last_verified_at"
	FieldIncident       = "active_incident"
	FieldSeverity       = "active_incident.severity"
	FieldFailureStage   = "active_incident.failure_stage"
	FieldOpenedAt       = "active_incident.opened_at"
)

var recordFields = []string{
	FieldStatus, FieldEndpointURL, FieldChainID, FieldTokenAddress, FieldPayeeAddress,
	FieldUptime, FieldPaidDelivery, FieldSchemaValidity, FieldLatency, FieldLastVerified, FieldIncident,
}

var incidentFields = []string{"severity", "failure_stage", "opened_at"}

var (
	addressPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`) }) // compiled on first use, not at start-up
	integerPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`) }) // compiled on first use, not at start-up
)

// Validate checks a CORTX response body strictly, field by field, as the
// skill's "Response validation" lists. The record may be used only when the
// findings are empty. now is the check time: last_verified_at may not be later.
//
// Unknown fields are allowed and ignored. A documented field that appears
// twice is a finding, so a response cannot say two things at once.
func Validate(raw []byte, now time.Time) (Record, []Finding) {
	rec := Record{Status: StatusUnknown}
	obj, f := decodeObject(raw, recordFields)
	if f != nil {
		f.Field = FieldResponse
		return rec, []Finding{*f}
	}
	v := validator{obj: obj}
	for _, k := range obj.dups {
		v.add(k, CodeDuplicateKey)
	}

	if s, ok := v.str(FieldStatus, true); ok {
		switch st := Status(s); st {
		case StatusOperational, StatusDegraded, StatusCritical, StatusUnknown:
			rec.Status = st
		default:
			v.add(FieldStatus, CodeNotInEnum) // the status stays unknown
		}
	}
	if s, ok := v.str(FieldEndpointURL, false); ok {
		switch n, err := Normalize(s); { // the policy bounds it at 2,048 bytes
		case err != nil:
			v.add(FieldEndpointURL, CodeNotHTTPSURL)
		case n != s:
			v.add(FieldEndpointURL, CodeNotNormal)
		default:
			rec.EndpointURL = s
		}
	}
	if lit, ok := v.number(FieldChainID, false, false); ok {
		n, err := strconv.ParseInt(lit, 10, 64)
		switch {
		case !integerPattern().MatchString(lit):
			v.add(FieldChainID, CodeNotInteger)
		case err != nil || n <= 0:
			v.add(FieldChainID, CodeOutOfRange)
		default:
			rec.ChainID = n
		}
	}
	rec.TokenAddress = v.address(FieldTokenAddress)
	rec.PayeeAddress = v.address(FieldPayeeAddress)
	rec.UptimePercent = v.metric(FieldUptime, 100)
	rec.PaidDeliveryPercent = v.metric(FieldPaidDelivery, 100)
	rec.SchemaValidityPercent = v.metric(FieldSchemaValidity, 100)
	rec.MedianLatencyMs = v.metric(FieldLatency, math.Inf(1))
	if raw, ok := v.obj.vals[FieldLastVerified]; ok && kindOf(raw) == kindNull {
		v.add(FieldLastVerified, CodeNotMeasured) // never verified
	} else if s, ok := v.str(FieldLastVerified, true); ok {
		if t, ok := v.timestamp(FieldLastVerified, s); ok {
			if t.After(now) {
				v.add(FieldLastVerified, CodeInFuture)
			} else {
				rec.LastVerifiedAt = t
			}
		}
	}
	rec.ActiveIncident = v.incident()
	return rec, v.findings
}

// object is a decoded JSON object: the documented fields' raw values, and the
// documented fields that appeared more than once.
type object struct {
	vals map[string]json.RawMessage
	dups []string
}

// decodeObject decodes raw as exactly one JSON object. Values of undocumented
// keys are checked for syntax (and nesting depth) by the decoder and dropped.
func decodeObject(raw []byte, known []string) (object, *Finding) {
	fail := func(c Code) (object, *Finding) {
		return object{}, &Finding{Stage: StageValidation, Code: c}
	}
	if !json.Valid(raw) {
		return fail(CodeUnparseable)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return fail(CodeUnparseable)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail(CodeNotObject)
	}
	isKnown := make(map[string]bool, len(known))
	for _, k := range known {
		isKnown[k] = true
	}
	obj := object{vals: make(map[string]json.RawMessage)}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(CodeUnparseable)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return fail(CodeUnparseable)
		}
		if !isKnown[key] {
			continue
		}
		if _, seen := obj.vals[key]; seen {
			if !contains(obj.dups, key) {
				obj.dups = append(obj.dups, key)
			}
			continue
		}
		obj.vals[key] = val
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fail(CodeUnparseable)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail(CodeUnparseable)
	}
	return obj, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// kind is the JSON type of a raw value, from its first byte.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func kindOf(raw json.RawMessage) kind {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return kindNull
	}
	switch raw[0] {
	case 'n':
		return kindNull
	case 't', 'f':
		return kindBool
	case '"':
		return kindString
	case '[':
		return kindArray
	case '{':
		return kindObject
	}
	return kindNumber
}

// validator collects findings over one decoded object. prefix names the
// object's fields in findings ("" for the record, "active_incident." inside).
type validator struct {
	obj      object
	prefix   string
	findings []Finding
}

func (v *validator) add(field string, c Code) {
	v.findings = append(v.findings, Finding{Stage: StageValidation, Field: v.prefix + field, Code: c})
}

// get returns a field's raw value and whether the field is present. An absent
// required field is a finding; an absent optional one is not.
func (v *validator) get(field string, required bool) (raw json.RawMessage, present bool) {
	raw, ok := v.obj.vals[field]
	if !ok {
		if required {
			v.add(field, CodeMissing)
		}
		return nil, false
	}
	return bytes.TrimSpace(raw), true
}

// str returns a string field. A binding field (not required) that is absent
// or null is left for Bind to report as missing.
func (v *validator) str(field string, required bool) (string, bool) {
	raw, present := v.get(field, required)
	if !present {
		return "", false
	}
	if !required && kindOf(raw) == kindNull {
		return "", false
	}
	var s string
	if kindOf(raw) != kindString || json.Unmarshal(raw, &s) != nil {
		v.add(field, CodeWrongType)
		return "", false
	}
	return s, true
}

// number returns a number field's literal. A null metric is "not measured".
func (v *validator) number(field string, required, metric bool) (string, bool) {
	raw, present := v.get(field, required)
	if !present {
		return "", false
	}
	switch k := kindOf(raw); {
	case k == kindNull && metric:
		v.add(field, CodeNotMeasured)
		return "", false
	case k == kindNull && !required:
		return "", false
	case k != kindNumber:
		v.add(field, CodeWrongType)
		return "", false
	}
	return string(raw), true
}

// metric returns a required number in [0, max].
func (v *validator) metric(field string, max float64) float64 {
	lit, ok := v.number(field, true, true)
	if !ok {
		return 0
	}
	x, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) || x < 0 || x > max {
		v.add(field, CodeOutOfRange)
		return 0
	}
	return x
}

func (v *validator) address(field string) string {
	s, ok := v.str(field, false)
	if !ok {
		return ""
	}
	if !addressPattern().MatchString(s) {
		v.add(field, CodeNotAddress)
		return ""
	}
	return s
}

func (v *validator) timestamp(field, s string) (time.Time, bool) {
	t, ok := ParseTimestamp(s)
	if !ok {
		v.add(field, CodeNotTimestamp)
	}
	return t, ok
}

// ParseTimestamp reads the RFC 3339 profile of ISO 8601: a full date, "T", a
// time with optional fractional seconds, and "Z" or a numeric offset. A time
// without an offset names no instant and is refused.
func ParseTimestamp(s string) (time.Time, bool) {
	if len(s) > 64 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// incident validates active_incident: required, null or an object with
// severity and failure_stage strings and an opened_at timestamp.
func (v *validator) incident() *Incident {
	raw, present := v.get(FieldIncident, true)
	if !present {
		return nil
	}
	switch kindOf(raw) {
	case kindNull:
		return nil
	case kindObject:
	default:
		v.add(FieldIncident, CodeWrongType)
		return nil
	}
	obj, f := decodeObject(raw, incidentFields)
	if f != nil { // already valid JSON, so only a depth failure lands here
		v.add(FieldIncident, f.Code)
		return nil
	}
	sub := validator{obj: obj, prefix: FieldIncident + "."}
	for _, k := range obj.dups {
		sub.add(k, CodeDuplicateKey)
	}
	var inc Incident
	inc.Severity, _ = sub.str("severity", true)
	inc.FailureStage, _ = sub.str("failure_stage", true)
	if s, ok := sub.str("opened_at", true); ok {
		inc.OpenedAt, _ = sub.timestamp("opened_at", s)
	}
	v.findings = append(v.findings, sub.findings...)
	return &inc
}
