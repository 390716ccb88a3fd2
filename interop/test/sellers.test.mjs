// payability grades real sellers: @x402/express (x402 v2) and x402-express
// (x402 v1), each for Solana and for Base, with verb-less and verb-specific
// route keys, on loopback. `payability check`, `memo` and `probe` (the built
// binary, --allow-private --json) run against each, and the suite asserts
// the grades the criteria give for what they answer. Each configuration is
// one of the recorded `captured:` corpus cases (internal/corpus/gen/captured,
// recorded by tools/capture): the live grades must also equal the corpus's
// expected outputs for that case.
import { blocked } from "../lib/guard.mjs"; // first: loopback only
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { keypair, startRpc } from "../lib/solana.mjs";
import { startFacilitator } from "../lib/facilitator.mjs";
import { V1, V2, config, start } from "../lib/sellers.mjs";
import { build, cliJSON } from "../lib/payability.mjs";

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../internal/corpus");

const CLOSED = "PRESENT-FAIL-CLOSED";
const DIRTY = "PRESENT-FAIL-DIRTY";
const ABSENT = "ABSENT";
const HEAD = ["METHOD-UNPAID-2XX:HEAD"];

// What the criteria give for what each middleware answers:
//  - v2 puts the challenge only in PAYMENT-REQUIRED and answers a body of
//    {}: no memo, no token account -> UNCONFIGURED; two fetches, no memo ->
//    MEMO-ABSENT; payment headers it does not evaluate get the plain
//    challenge -> ABSENT.
//  - v1 answers the challenge in the body with no PAYMENT-REQUIRED header ->
//    HEADER-MISSING; every payment probe gets a 402 with an "error" -> CLOSED.
//  - A GET key leaves HEAD unpaid (200) -> METHOD-UNPAID-2XX:HEAD, and the
//    POST probes hit express's 404 HTML -> DIRTY.
//  - A POST key leaves GET to express's 404 -> NOT-A-402.
const EXPECT = {
  [V2.slug]: {
    verbless: { check: "UNCONFIGURED", memo: "MEMO-ABSENT", grade: ABSENT, exposures: [] },
    get: { check: "UNCONFIGURED", memo: "MEMO-ABSENT", grade: DIRTY, exposures: HEAD },
    post: { check: "NOT-A-402", memo: "NOT-A-402", grade: ABSENT, exposures: [] },
  },
  [V1.slug]: {
    verbless: { check: "HEADER-MISSING", memo: "MEMO-ABSENT", grade: CLOSED, exposures: [] },
    get: { check: "HEADER-MISSING", memo: "MEMO-ABSENT", grade: DIRTY, exposures: HEAD },
    post: { check: "NOT-A-402", memo: "NOT-A-402", grade: CLOSED, exposures: [] },
  },
};

const CONFIGS = [];
for (const impl of [V2, V1]) {
  for (const [network, route] of [
    ["solana", "verbless"], ["solana-devnet", "get"], ["solana", "post"],
    ["base", "verbless"], ["base-sepolia", "get"], ["base", "post"],
  ]) {
    CONFIGS.push(config(impl, network, route));
  }
}

let bin, rpc, fac, corpus;

before(async () => {
  bin = await build();
  rpc = await startRpc();
  fac = await startFacilitator({ feePayer: keypair().address, rpc });
  corpus = new Map();
  for (const file of ["payability-corpus.v1.json", "railprobe-corpus.v1.json"]) {
    const doc = JSON.parse(await readFile(path.join(CORPUS, file), "utf8"));
    for (const c of doc.cases ?? doc) corpus.set(c.id, c);
  }
});

after(async () => {
  await fac?.close();
  await rpc?.close();
  await bin?.cleanup();
  assert.deepEqual(blocked, [], "nothing may leave loopback");
});

for (const c of CONFIGS) {
  test(`${c.impl.name}@${c.impl.version} ${c.network} ${c.route}`, async () => {
    const want = EXPECT[c.impl.slug][c.route];
    const seller = await start(c, fac.url);
    try {
      const check = await cliJSON(bin.bin, "check", seller.url);
      const memo = await cliJSON(bin.bin, "memo", seller.url);
      const probe = await cliJSON(bin.bin, "probe", seller.url);
      const grades = Object.fromEntries(Object.entries(probe.grades).map(([k, v]) => [k, v.grade]));
      assert.equal(check.state, want.check, "check");
      assert.equal(memo.state, want.memo, "memo");
      assert.equal(probe.outcome, "PROBED");
      assert.deepEqual(grades, { direct: want.grade, facilitator: want.grade, missing_memo: want.grade, bogus: want.grade }, "probe grades");
      assert.deepEqual(probe.exposures, want.exposures, "exposures");

      // The same answers as the recorded case of this configuration.
      const recorded = (op) => corpus.get(`captured-${c.id}-${op}`)?.expected;
      assert.equal(check.state, recorded("check")?.state, "check vs corpus");
      assert.equal(memo.state, recorded("memo")?.state, "memo vs corpus");
      const rec = recorded("probe");
      assert.deepEqual(grades, Object.fromEntries(Object.entries(rec.grades).map(([k, v]) => [k, v.grade])), "probe vs corpus");
      assert.deepEqual(probe.exposures, rec.exposures, "exposures vs corpus");
    } finally {
      await seller.close();
    }
  });
}

test("no seller ever reached /verify or /settle with a probe payload", () => {
  assert.equal(fac.callsTo("/verify").length + fac.callsTo("/settle").length, 0);
});
