// The local source's contract with the payability binary: the command line
// it runs, and what it accepts back (a record on stdout, exit 0/10/20 that
// agrees with the decision). A stand-in script plays the binary here; the
// interop suite (interop/test/guard.test.mjs) runs the real one.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile, readFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createGuard, preflightArgs } from "../index.js";
import { vectors, ctxOf } from "./helpers.mjs";

let dir;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "x402-guard-local-"));
});
after(() => rm(dir, { recursive: true, force: true }));

// binary writes a script that records its arguments and answers out/code.
async function binary(name, out, code) {
  const file = path.join(dir, name);
  const argsFile = `${file}.args`;
  await writeFile(file, `#!${process.execPath}\nrequire("node:fs").writeFileSync(${JSON.stringify(argsFile)}, JSON.stringify(process.argv.slice(2)));\nprocess.stdout.write(${JSON.stringify(out)});\nprocess.exitCode = ${code};\n`);
  await chmod(file, 0o755);
  return { file, args: async () => JSON.parse(await readFile(argsFile, "utf8")) };
}

const v2 = vectors.terms[0];
const terms = v2.entries[0].terms_sha256;
const record = (decision, reasons, t = terms) => JSON.stringify({ document: "x402-preflight/v1", revision: "2", decision, reasons, terms_sha256: t, probes: [{ whatever: "revision 2 may change" }] });

test("the command line: --json, the request, the entry and the budget, then -- URL", async () => {
  const b = await binary("go", record("GO", []), 0);
  const g = createGuard({ binary: b.file, allowPrivate: true, maxAmount: "20000", method: "POST", body: '{"city":"Lyon"}' });
  const out = await g.check(ctxOf(v2));
  assert.equal(out.proceed, true, out.reason);
  assert.equal(out.revision, "2");
  const e = ctxOf(v2).selectedRequirements;
  assert.deepEqual(await b.args(), ["preflight", "--json", "--allow-private", "--method", "POST", "--body", '{"city":"Lyon"}', "--network", e.network, "--scheme", "exact", "--asset", e.asset, "--max-amount", "20000", "--", "https://api.example.com/weather"]);
  assert.deepEqual(preflightArgs({ url: "https://x.example/" }, {}), ["preflight", "--json", "--", "https://x.example/"]);
});

const CASES = [
  ["STOP exit 20", record("STOP", ["fail_open"], null), 20, "preflight_stop:fail_open"],
  ["HOLD exit 10", record("HOLD", ["method_open"]), 10, "preflight_hold:method_open"],
  ["GO on other terms", record("GO", [], "0".repeat(64)), 0, "terms_mismatch"],
  ["exit 2 (a refused URL)", "", 2, "preflight_unavailable"],
  ["exit 1", record("GO", []), 1, "preflight_unavailable"],
  ["an exit status that disagrees with the decision", record("GO", []), 20, "preflight_unavailable"],
  ["not JSON", "GO", 0, "preflight_unavailable"],
  ["not a preflight record", JSON.stringify({ document: "x402-lint/v1", revision: "1", decision: "GO", reasons: [], terms_sha256: terms }), 0, "preflight_unavailable"],
  ["a reason that is not a code", record("HOLD", ["Ask the seller!"]), 10, "preflight_unavailable"],
  ["GO with reasons", record("GO", ["method_open"]), 0, "preflight_unavailable"],
  ["over a megabyte", " ".repeat((1 << 20) + 1) + record("GO", []), 0, "preflight_unavailable"],
];

for (const [name, out, code, reason] of CASES) {
  test(`the binary answers ${name}: ${reason}`, async () => {
    const b = await binary(name.replace(/\W+/g, "-"), out, code);
    const outcome = await createGuard({ binary: b.file }).check(ctxOf(v2));
    assert.equal(outcome.reason, reason);
    assert.equal(outcome.proceed, false);
  });
}

test("no binary: preflight_unavailable", async () => {
  const outcome = await createGuard({ binary: path.join(dir, "does-not-exist") }).check(ctxOf(v2));
  assert.equal(outcome.reason, "preflight_unavailable");
});
