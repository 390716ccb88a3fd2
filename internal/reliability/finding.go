package reliability

// Stage says which step of the check produced a finding.
type Stage string

// The stages, in the order the client runs them.
const (
	StageResponse   Stage = "response"   // fetching the CORTX record
	StageValidation Stage = "validation" // the record's fields, one by one
	StageChallenge  Stage = "challenge"  // the endpoint's own 402 challenge (the local terms)
	StageBinding    Stage = "binding"    // the record against the intended request
)

// Code is a closed-form finding code. A finding never carries a fetched
// string: the field is from a fixed set of names and the code from this list.
type Code string

// Finding codes.
const (
	// response
	CodeFetchFailed      Code = "fetch_failed"      // no response (refused, reset, guard refusal)
	CodeTimeout          Code = "timeout"           // the exchange did not finish in time
	CodeOverCap          Code = "over_cap"          // the body is longer than the cap
	CodeUnexpectedStatus Code = "unexpected_status" // neither 200 nor 404
	// validation
	CodeUnparseable  Code = "unparseable"   // not one JSON value, or nested too deep
	CodeNotObject    Code = "not_object"    // valid JSON that is not an object
	CodeDuplicateKey Code = "duplicate_key" // a documented field appears twice
	CodeMissing      Code = "missing"       // a required field is absent
	CodeNotMeasured  Code = "not_measured"  // a metric is null: nothing was measured
	CodeWrongType    Code = "wrong_type"    // the JSON type is not the documented one
	CodeNotInEnum    Code = "not_in_enum"   // status is not one of the four values (treated as unknown)
	CodeOutOfRange   Code = "out_of_range"  // a number outside its documented range (treated as unknown)
	CodeNotInteger   Code = "not_integer"   // chain_id is a number but not an integer literal
	CodeNotTimestamp Code = "not_timestamp" // not an RFC 3339 timestamp (treated as stale)
	CodeInFuture     Code = "in_future"     // last_verified_at is later than the check (treated as stale)
	CodeNotHTTPSURL  Code = "not_https_url" // endpoint_url is not an HTTPS URL the policy accepts
	CodeNotNormal    Code = "not_normalized"
	CodeNotAddress   Code = "not_address" // not 0x followed by 40 hex digits
	// challenge
	CodeNot402        Code = "not_402"         // the endpoint did not answer 402
	CodeNoBaseAccepts Code = "no_base_accepts" // no accepts entry on Base in the header or the body
	CodeAmbiguous     Code = "ambiguous"       // Base entries disagree on payTo or asset
	// binding
	CodeMismatch   Code = "mismatch"   // differs from the intended request or the local terms
	CodeUnresolved Code = "unresolved" // no local term to compare with (the challenge failed)
	CodeStale      Code = "stale"      // last_verified_at is more than 60 minutes old
)

// Finding is one reason a record cannot be used.
type Finding struct {
	Stage Stage  `json:"stage"`
	Field string `json:"field"`
	Code  Code   `json:"code"`
}

// Message is a fixed sentence for the finding's code.
func (f Finding) Message() string {
	if s, ok := messages[f.Code]; ok {
		return s
	}
	return "finding"
}

var messages = map[Code]string{
	CodeFetchFailed:      "no response (refused, reset or blocked by the address guard)",
	CodeTimeout:          "no complete response within the fetch timeout",
	CodeOverCap:          "the body is longer than 65,536 bytes and was not read",
	CodeUnexpectedStatus: "the status is neither 200 nor 404",
	CodeUnparseable:      "not a single JSON value (or nested too deeply)",
	CodeNotObject:        "valid JSON, but not an object",
	CodeDuplicateKey:     "the field appears more than once",
	CodeMissing:          "absent",
	CodeNotMeasured:      "null: not measured",
	CodeWrongType:        "not of the documented JSON type",
	CodeNotInEnum:        "not operational, degraded, critical or unknown; treated as unknown",
	CodeOutOfRange:       "outside the documented range; treated as unknown",
	CodeNotInteger:       "not an integer",
	CodeNotTimestamp:     "not an RFC 3339 timestamp; treated as stale",
	CodeInFuture:         "later than this check; treated as stale",
	CodeNotHTTPSURL:      "not an HTTPS URL",
	CodeNotNormal:        "not in normalized form",
	CodeNotAddress:       "not a 0x-prefixed 40-hex-digit address",
	CodeNot402:           "the endpoint did not answer 402 with a challenge",
	CodeNoBaseAccepts:    "no accepts entry on Base (base or eip155:8453)",
	CodeAmbiguous:        "the Base entries disagree on payTo or asset",
	CodeMismatch:         "does not match the intended request",
	CodeUnresolved:       "nothing to compare with: the local payment terms are unresolved",
	CodeStale:            "more than 60 minutes old",
}

// Codes lists every finding code (the closed set).
func Codes() []Code {
	out := make([]Code, 0, len(messages))
	for c := range messages {
		out = append(out, c)
	}
	return out
}
