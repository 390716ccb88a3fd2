package preflight

import (
	"encoding/base64"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

func TestGradeRules(t *testing.T) {
	unpaid := status(402, `{"error":"`+unpaidError+`"}`, nil)
	paymentResponse := func(json string) capture.Header {
		return capture.Header{"Payment-Response": {base64.StdEncoding.EncodeToString([]byte(json))}}
	}
	prHeader := func(json string) capture.Header {
		return capture.Header{"Payment-Required": {base64.StdEncoding.EncodeToString([]byte(json))}}
	}
	tests := []struct {
		name   string
		unpaid capture.Capture
		answer capture.Capture
		want   Grade
	}{
		{"failed fetch is UNGRADED", unpaid, capture.Capture{Outcome: capture.Failed, Error: capture.ConnectRefused}, Ungraded},
		{"timeout is UNGRADED", unpaid, capture.Capture{Outcome: capture.Timeout}, Ungraded},
		{"200 is FAIL-OPEN", unpaid, status(200, `ok`, nil), FailOpen},
		{"204 is FAIL-OPEN", unpaid, status(204, ``, nil), FailOpen},
		{"over-cap 200 is FAIL-OPEN", unpaid, capture.Capture{Outcome: capture.OverCap, Status: 200}, FailOpen},
		{"402 with a new body error is CLOSED", unpaid, status(402, `{"error":"invalid_payload"}`, nil), Closed},
		{"402 with a body reason is CLOSED", unpaid, status(402, `{"reason":"bad signature"}`, nil), Closed},
		{"402 with a body detail is CLOSED", unpaid, status(402, `{"detail":"expired"}`, nil), Closed},
		{"402 with a PAYMENT-REQUIRED error is CLOSED", status(402, `{}`, nil), status(402, `{}`, prHeader(`{"x402Version":2,"error":"invalid_exact_svm_payload_transaction"}`)), Closed},
		{"402 with PAYMENT-RESPONSE success false is CLOSED", unpaid, status(402, `{"error":"`+unpaidError+`"}`, paymentResponse(`{"success":false,"errorReason":"x"}`)), Closed},
		{"over-cap 402 with a new PAYMENT-REQUIRED error is CLOSED (headers are read)", status(402, `{}`, nil), capture.Capture{Outcome: capture.OverCap, Status: 402, Header: prHeader(`{"error":"invalid_payload"}`)}, Closed},
		{"over-cap 402 with only a body is NOT-EVALUATED (the body was not kept)", unpaid, capture.Capture{Outcome: capture.OverCap, Status: 402}, NotEvaluated},
		{"400 is CLOSED", unpaid, status(400, `nope`, nil), Closed},
		{"422 is CLOSED", unpaid, status(422, ``, nil), Closed},
		{"402 repeating the unpaid error is NOT-EVALUATED", unpaid, status(402, `{"error":"`+unpaidError+`"}`, nil), NotEvaluated},
		{"402 repeating the unpaid header error is NOT-EVALUATED",
			status(402, `{}`, prHeader(`{"error":"Payment required"}`)), status(402, `{}`, prHeader(`{"error":"Payment required"}`)), NotEvaluated},
		{"402 repeating PAYMENT-RESPONSE success false is NOT-EVALUATED",
			status(402, `{}`, paymentResponse(`{"success":false}`)), status(402, `{}`, paymentResponse(`{"success":false}`)), NotEvaluated},
		{"402 with an empty error is NOT-EVALUATED", unpaid, status(402, `{"error":""}`, nil), NotEvaluated},
		{"402 with a non-string error is NOT-EVALUATED", unpaid, status(402, `{"error":{"code":1}}`, nil), NotEvaluated},
		{"402 with PAYMENT-RESPONSE success true is NOT-EVALUATED", unpaid, status(402, ``, paymentResponse(`{"success":true}`)), NotEvaluated},
		{"402 with no body is NOT-EVALUATED", unpaid, status(402, ``, nil), NotEvaluated},
		{"500 is ERRORED", unpaid, status(500, `{"error":"boom"}`, nil), Errored},
		{"503 is ERRORED", unpaid, status(503, ``, nil), Errored},
		{"404 is DIRTY", unpaid, status(404, ``, nil), Dirty},
		{"405 is DIRTY", unpaid, status(405, ``, nil), Dirty},
		{"302 is DIRTY", unpaid, status(302, ``, nil), Dirty},
		{"401 is DIRTY", unpaid, status(401, `{"error":"unauthorized"}`, nil), Dirty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GradeAnswer(tt.unpaid, tt.answer); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestGradesAreTheDocuments(t *testing.T) {
	var got []string
	seen := map[string]bool{}
	for _, r := range Document().Grades.Rules {
		if !seen[r.Grade] {
			seen[r.Grade] = true
			got = append(got, r.Grade)
		}
	}
	want := Grades()
	if len(got) != len(want) {
		t.Fatalf("document grades %v, code %v", got, want)
	}
	for i := range want {
		if got[i] != string(want[i]) {
			t.Errorf("grade %d: document %s, code %s", i, got[i], want[i])
		}
	}
	if len(Document().Grades.Rules) != len(gradeRules) {
		t.Errorf("document has %d grade rules, code %d", len(Document().Grades.Rules), len(gradeRules))
	}
	for i, r := range Document().Grades.Rules {
		if string(gradeRules[i].grade) != r.Grade {
			t.Errorf("rule %d: document %s, code %s", i, r.Grade, gradeRules[i].grade)
		}
	}
}
