package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
)

// validateAgainst checks a JSON answer against one of the schemas the
// OpenAPI document publishes, with a JSON Schema 2020-12 validator.
func validateAgainst(t *testing.T, name string, sch schema, body []byte) {
	t.Helper()
	raw, _ := json.Marshal(sch)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name+".json", doc); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile(name + ".json")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: answer is not JSON: %v", name, err)
	}
	if err := compiled.Validate(v); err != nil {
		t.Errorf("%s: the answer does not match the published schema: %v\n%s", name, err, body)
	}
}

// What the server answers matches the schemas the OpenAPI document
// publishes for it: the three paid reports, both pre-check answers, the
// verification, the challenge and refusal bodies, the problems and the two
// fallbacks.
func TestAnswersMatchThePublishedSchemas(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	jsonCT := map[string]string{"Content-Type": "application/json"}
	for _, op := range []string{"check", "memo", "probe"} {
		res, _, _ := h.payAndPost(prefixOf(serviceOfOp(op))+"/"+op, seller.URL+"/paid")
		if res.status != 200 {
			t.Fatalf("paid %s: %d %s", op, res.status, res.body)
		}
		validateAgainst(t, op+"-report", reportSchema(op), res.body)
		v := h.do(http.MethodPost, "/verify", string(res.body), jsonCT)
		validateAgainst(t, "verification", verificationSchema(), v.body)
	}
	for i, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		h.clock.Add(10e9)
		res := h.do(http.MethodPost, prefixOf(svc)+"/precheck", fmt.Sprintf(`{"url":"https://example.com/%d","caller":%q}`, i, testPayTo), jsonCT)
		if res.status != 200 {
			t.Fatalf("precheck %s: %d %s", svc, res.status, res.body)
		}
		validateAgainst(t, svc+"-precheck", precheckSchema(svc), res.body)
	}
	bad := h.do(http.MethodPost, "/verify", `{"signature":1}`, jsonCT)
	validateAgainst(t, "verification-refused", verificationSchema(), bad.body)
	challenge := h.do(http.MethodPost, "/toll/payability/check", `{"url":"https://example.com/x"}`, jsonCT)
	validateAgainst(t, "challenge", challengeBodySchema(), challenge.body)
	refusal := h.do(http.MethodPost, "/toll/payability/check", `{"url":"https://example.com/x"}`,
		map[string]string{"Content-Type": "application/json", gate.HeaderPaymentTx: "x", gate.HeaderPaymentMemo: "y"})
	validateAgainst(t, "refusal", challengeBodySchema(), refusal.body)
	policy := h.do(http.MethodPost, "/toll/payability/check", `{"url":"ftp://example.com/x"}`, jsonCT)
	validateAgainst(t, "problem", problemSchema(), policy.body)
	validateAgainst(t, "not-found", notFoundSchema(), h.do(http.MethodGet, "/nothing", "", nil).body)
	validateAgainst(t, "not-covered", notCoveredSchema(), h.do(http.MethodPost, "/probe", "{}", jsonCT).body)
}
