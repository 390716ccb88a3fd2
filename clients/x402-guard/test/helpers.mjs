import { readFileSync } from "node:fs";

export const vectors = JSON.parse(readFileSync(new URL("./fixtures/go-vectors.json", import.meta.url), "utf8"));

// The challenge as an x402 client holds it: the v2 header decoded, or the
// v1 body parsed.
export function challengeOf(v) {
  return JSON.parse(v.header ? Buffer.from(v.header, "base64").toString("utf8") : v.body);
}

export const record = (name) => structuredClone(vectors.records.find((r) => r.name === name).record);

// The time the fixture records were verified, plus ms.
export const at = (ms) => Date.parse("2026-03-02T09:10:00.412Z") + ms;

// A decision source for the guard's rule tests: it answers from a function
// and counts its calls.
export function source(answer) {
  const s = {
    name: "test",
    calls: [],
    decide(req, signal) {
      s.calls.push(req);
      return answer(req, signal);
    },
  };
  return s;
}

// A context as @x402/core's x402Client passes it to onBeforePaymentCreation.
export function ctxOf(v, index = 0) {
  const paymentRequired = challengeOf(v);
  return { paymentRequired, selectedRequirements: paymentRequired.accepts[index] };
}
