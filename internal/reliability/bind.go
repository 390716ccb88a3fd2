package reliability

import (
	"strings"
	"time"
)

// MaxAge is how old last_verified_at may be for a record to bind.
const MaxAge = 60 * time.Minute

// Bind checks that a validated record describes the exact request the agent
// intends: the normalized intended URL, the chain and the token and payee of
// the locally resolved terms, verified within the last 60 minutes. Every
// binding field must be present. Any finding means the record is not used.
func Bind(rec Record, intended string, terms Terms, now time.Time) []Finding {
	var fs []Finding
	add := func(field string, c Code) {
		fs = append(fs, Finding{Stage: StageBinding, Field: field, Code: c})
	}
	switch {
	case rec.EndpointURL == "":
		add(FieldEndpointURL, CodeMissing)
	case rec.EndpointURL != intended: // both normalized: exact equality
		add(FieldEndpointURL, CodeMismatch)
	}
	switch {
	case rec.ChainID == 0:
		add(FieldChainID, CodeMissing)
	case terms.ChainID == 0:
		add(FieldChainID, CodeUnresolved)
	case rec.ChainID != terms.ChainID:
		add(FieldChainID, CodeMismatch)
	}
	bindAddress := func(field, got, want string) {
		switch {
		case got == "":
			add(field, CodeMissing)
		case want == "":
			add(field, CodeUnresolved)
		case !strings.EqualFold(got, want): // EVM hex: case is only a checksum
			add(field, CodeMismatch)
		}
	}
	bindAddress(FieldTokenAddress, rec.TokenAddress, terms.Asset)
	bindAddress(FieldPayeeAddress, rec.PayeeAddress, terms.PayTo)
	switch {
	case rec.LastVerifiedAt.IsZero():
		add(FieldLastVerified, CodeMissing)
	case rec.LastVerifiedAt.After(now):
		add(FieldLastVerified, CodeInFuture)
	case now.Sub(rec.LastVerifiedAt) > MaxAge:
		add(FieldLastVerified, CodeStale)
	}
	return fs
}
