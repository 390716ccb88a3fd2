// Reference sellers lint clean: `payability lint` (the built binary,
// --allow-private --json) against @x402/express (x402 v2) and x402-express
// (x402 v1) on loopback, for Solana and Base, verb-less, GET and POST route
// keys (a POST key is linted with --method POST, as its clients call it).
// Every one must conform (no error finding, exit 0 under the default
// --fail-on error); the dialect must be the one the middleware speaks.
import { blocked } from "../lib/guard.mjs"; // first: loopback only
import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { keypair, startRpc } from "../lib/solana.mjs";
import { startFacilitator } from "../lib/facilitator.mjs";
import { V1, V2, config, start } from "../lib/sellers.mjs";
import { build, cli } from "../lib/payability.mjs";

const CONFIGS = [];
for (const impl of [V2, V1]) {
  for (const [network, route] of [
    ["solana", "verbless"], ["solana-devnet", "get"], ["solana", "post"],
    ["base", "verbless"], ["base-sepolia", "get"], ["base", "post"],
  ]) {
    CONFIGS.push(config(impl, network, route));
  }
}

let bin, rpc, fac;

before(async () => {
  bin = await build();
  rpc = await startRpc();
  fac = await startFacilitator({ feePayer: keypair().address, rpc });
});

after(async () => {
  await fac?.close();
  await rpc?.close();
  await bin?.cleanup();
  assert.deepEqual(blocked, [], "nothing may leave loopback");
});

for (const c of CONFIGS) {
  test(`lint ${c.impl.name}@${c.impl.version} ${c.network} ${c.route}`, async () => {
    const seller = await start(c, fac.url);
    try {
      const method = c.route === "post" ? ["--method", "POST"] : [];
      const r = await cli(bin.bin, "lint", "--json", "--allow-private", ...method, seller.url);
      const report = JSON.parse(r.stdout);
      const errors = report.findings.filter((f) => f.severity === "error");
      assert.deepEqual(errors, [], "no error finding");
      assert.equal(r.code, 0, `exit status (stderr ${r.stderr})`);
      assert.equal(report.op, "lint");
      assert.equal(report.status, 402);
      assert.equal(report.conforms, true);
      assert.equal(report.method, c.route === "post" ? "POST" : "GET");
      assert.deepEqual(report.dialect, c.impl === V2 ? { v1_body: false, v2_header: true } : { v1_body: true, v2_header: false });
      assert.ok(report.entries.length >= 1, "entries");
      for (const e of report.entries) assert.equal(e.errors, 0);
      // The text output ends with the bottom line.
      const text = await cli(bin.bin, "lint", "--allow-private", ...method, seller.url);
      assert.match(text.stdout, /X402 LINT — conforms: yes — 0 errors, \d+ warnings — \d{4}-\d\d-\d\dT/);
    } finally {
      await seller.close();
    }
  });
}

test("no seller ever reached /verify or /settle while being linted", () => {
  assert.equal(fac.callsTo("/verify").length + fac.callsTo("/settle").length, 0);
});
