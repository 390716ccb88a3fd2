package reliability

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBind(t *testing.T) {
	terms := Terms{ChainID: 8453, PayTo: payee, Asset: usdcOnBase}
	good := func() Record {
		rec, fs := Validate(mustJSON(t, record()), checkTime)
		if len(fs) != 0 {
			t.Fatal(fs)
		}
		return rec
	}
	b := func(field string, c Code) Finding { return Finding{StageBinding, field, c} }
	tests := []struct {
		name  string
		mod   func(r *Record)
		terms Terms
		want  []Finding
	}{
		{"every field matches", func(*Record) {}, terms, nil},
		{"addresses compare case-insensitively", func(r *Record) {
			r.TokenAddress, r.PayeeAddress = strings.ToLower(r.TokenAddress), "0x"+strings.ToUpper(r.PayeeAddress[2:])
		}, terms, nil},
		{"verified exactly 60 minutes ago", func(r *Record) { r.LastVerifiedAt = checkTime.Add(-MaxAge) }, terms, nil},
		{"another endpoint's record", func(r *Record) { r.EndpointURL = "https://other.example/api/paid" }, terms, []Finding{b("endpoint_url", CodeMismatch)}},
		{"another path", func(r *Record) { r.EndpointURL = "https://seller.example/api/free" }, terms, []Finding{b("endpoint_url", CodeMismatch)}},
		{"another port", func(r *Record) { r.EndpointURL = "https://seller.example:8443/api/paid" }, terms, []Finding{b("endpoint_url", CodeMismatch)}},
		{"another chain", func(r *Record) { r.ChainID = 1 }, terms, []Finding{b("chain_id", CodeMismatch)}},
		{"another token", func(r *Record) { r.TokenAddress = "0x1111111111111111111111111111111111111111" }, terms, []Finding{b("token_address", CodeMismatch)}},
		{"another payee", func(r *Record) { r.PayeeAddress = "0x2222222222222222222222222222222222222222" }, terms, []Finding{b("payee_address", CodeMismatch)}},
		{"stale", func(r *Record) { r.LastVerifiedAt = checkTime.Add(-MaxAge - time.Second) }, terms, []Finding{b("last_verified_at", CodeStale)}},
		{"in the future", func(r *Record) { r.LastVerifiedAt = checkTime.Add(time.Second) }, terms, []Finding{b("last_verified_at", CodeInFuture)}},
		{"never verified", func(r *Record) { r.LastVerifiedAt = time.Time{} }, terms, []Finding{b("last_verified_at", CodeMissing)}},
		{"public API shape: binding fields missing", func(r *Record) {
			r.EndpointURL, r.ChainID, r.TokenAddress, r.PayeeAddress = "", 0, "", ""
		}, terms, []Finding{b("endpoint_url", CodeMissing), b("chain_id", CodeMissing), b("token_address", CodeMissing), b("payee_address", CodeMissing)}},
		{"local terms unresolved", func(*Record) {}, Terms{}, []Finding{b("chain_id", CodeUnresolved), b("token_address", CodeUnresolved), b("payee_address", CodeUnresolved)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := good()
			tt.mod(&rec)
			if got := Bind(rec, intendedURL, tt.terms, checkTime); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings = %v, want %v", got, tt.want)
			}
		})
	}
}
