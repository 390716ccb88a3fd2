// payability preflight against real seller middleware: @x402/express (x402
// v2) and x402-express (x402 v1), on Solana and Base, on loopback. P1 (the
// structural probe) must reach the seller's real verification — the fake
// facilitator's /verify sees it and refuses it — and nothing is ever
// settled. Under revision 2 the Solana P1 passes every check of that
// facilitator but the signature's. The decisions are what x402-preflight/v1
// revision 2 gives for what each middleware answers (docs/preflight.md).
import { blocked } from "../lib/guard.mjs"; // first: loopback only
import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { keypair, startRpc } from "../lib/solana.mjs";
import { check, startFacilitator } from "../lib/facilitator.mjs";
import { V1, V2, config, start } from "../lib/sellers.mjs";
import { build, cli } from "../lib/payability.mjs";

let bin, rpc, fac, feePayer;

before(async () => {
  bin = await build();
  rpc = await startRpc();
  feePayer = keypair().address;
  fac = await startFacilitator({ feePayer, rpc });
});

after(async () => {
  await fac?.close();
  await rpc?.close();
  await bin?.cleanup();
  assert.deepEqual(blocked, [], "nothing may leave loopback");
});

async function preflight(url, ...args) {
  const r = await cli(bin.bin, "preflight", "--json", "--allow-private", ...args, url);
  assert.ok([0, 10, 20].includes(r.code), `preflight exited ${r.code}: ${r.stderr}`);
  return { code: r.code, rec: JSON.parse(r.stdout) };
}

const grades = (rec) => Object.fromEntries([...rec.probes, ...rec.method_matrix].map((p) => [p.id, p.grade]));

// What each middleware answers, and so what x402-preflight/v1 decides:
//  - a verb-less route gates every method: the unpaid HEAD and POST get the
//    challenge (NOT-EVALUATED, not open); P1 is verified by the facilitator
//    and refused with a reason of its own (CLOSED) -> GO.
//  - @x402/express answers the bogus v2 header like an unpaid request
//    (NOT-EVALUATED: the unpaid error is discounted); x402-express refuses
//    it with an error of its own (CLOSED). P2 decides only fail_open.
//  - a GET route leaves HEAD to express, which serves it unpaid (200):
//    method_open -> HOLD.
//  - a POST route: GET is express's 404, so the gated method is POST; the
//    other method (GET) is DIRTY, not open -> GO.
const CASES = [
  { impl: V2, network: "solana", route: "verbless", decision: "GO", reasons: [], p2: "NOT-EVALUATED", method: "GET" },
  { impl: V2, network: "base", route: "verbless", decision: "GO", reasons: [], p2: "NOT-EVALUATED", method: "GET" },
  { impl: V1, network: "solana", route: "verbless", decision: "GO", reasons: [], p2: "CLOSED", method: "GET" },
  { impl: V1, network: "base", route: "verbless", decision: "GO", reasons: [], p2: "CLOSED", method: "GET" },
  { impl: V2, network: "solana-devnet", route: "get", decision: "HOLD", reasons: ["method_open"], p2: "NOT-EVALUATED", method: "GET" },
  { impl: V2, network: "solana", route: "post", decision: "GO", reasons: [], p2: "NOT-EVALUATED", method: "POST" },
];

for (const c of CASES) {
  test(`${c.impl.name}@${c.impl.version} ${c.network} ${c.route}: P1 reaches verification and is refused; ${c.decision}`, async () => {
    const seller = await start(config(c.impl, c.network, c.route), fac.url);
    const before = fac.callsTo("/verify").length;
    try {
      const { code, rec } = await preflight(seller.url);
      const verifies = fac.callsTo("/verify").slice(before);
      assert.equal(verifies.length, 1, "P1 reached the facilitator's /verify exactly once");
      if (c.network.startsWith("solana")) {
        // Everything a facilitator checks before the signature passes: fee
        // payer, transfer, mint, recipient's token account, amount, memo.
        const { x402Version, paymentPayload, paymentRequirements } = verifies[0].body;
        const r = await check(x402Version, paymentPayload, paymentRequirements, feePayer);
        assert.equal(r.reason, "invalid_exact_svm_payload_signature_invalid");
      }
      assert.equal(rec.revision, "2");
      assert.deepEqual(rec.dialects, [c.impl === V2 ? 2 : 1]);
      assert.equal(grades(rec).p1_structural, "CLOSED");
      assert.equal(grades(rec).p2_bogus, c.p2);
      assert.equal(rec.method, c.method);
      assert.equal(rec.selected_entry.x402_version, c.impl === V2 ? 2 : 1);
      assert.equal(rec.lint.errors, 0);
      assert.match(rec.terms_sha256, /^[0-9a-f]{64}$/);
      assert.equal(rec.decision, c.decision, JSON.stringify(rec.reasons));
      assert.deepEqual(rec.reasons, c.reasons);
      assert.equal(code, { GO: 0, HOLD: 10, STOP: 20 }[c.decision]);
    } finally {
      await seller.close();
    }
  });
}

test("nothing was ever settled", () => {
  assert.equal(fac.callsTo("/settle").length, 0);
});
