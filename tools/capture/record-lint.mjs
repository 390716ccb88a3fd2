// Records what real x402 seller middleware answers to `payability lint`, as
// x402-lint corpus case inputs (one request per case: GET, or POST {} for a
// POST route key), keeping the headers lint's HTTP rules read.
//
//   cd tools/capture && npm ci && node record-lint.mjs
//
// Writes internal/corpus/lintgen/captured/x402-express.json (a JSON array
// of cases without `expected`); corpus/lintgen computes the expected results.
import { refused } from "./loopback-guard.mjs"; // must stay the first import
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const { startFakeFacilitator } = await import("./fake-facilitator.mjs");
const { CONFIGS, configUrl, configNote, startSeller } = await import("./sellers.mjs");
const { recordLint } = await import("./recorder.mjs");

const FACILITATOR_PORT = 48401;
const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../internal/corpus/lintgen/captured/x402-express.json");

function tidy(capture) {
  if (!capture.headers) return capture;
  const headers = {};
  for (const k of Object.keys(capture.headers).sort()) headers[k] = capture.headers[k];
  return { ...capture, headers };
}

const facilitator = await startFakeFacilitator(FACILITATOR_PORT);
const cases = [];
for (const c of CONFIGS) {
  const seller = await startSeller(c, facilitator.url);
  try {
    const url = configUrl(c);
    const method = c.route === "post" ? "POST" : "GET";
    const id = `captured-lint-${c.impl.slug}-${c.network}-${c.route}`;
    const captures = (await recordLint(url, method)).map(tidy);
    cases.push({ id, provenance: `captured:${c.impl.name}@${c.impl.version}`, op: "lint", method, note: configNote(c), url, captures });
    console.log(`${id}: ${method} ${captures.map((x) => x.status ?? x.outcome).join(" ")}`);
  } finally {
    await seller.close();
  }
}
await facilitator.close();

if (refused.length > 0) {
  console.error(`loopback guard refused ${refused.length} non-loopback connection(s); nothing written`);
  process.exit(1);
}
await mkdir(path.dirname(OUT), { recursive: true });
await writeFile(OUT, JSON.stringify(cases, null, 2) + "\n");
console.log(`wrote ${cases.length} cases to ${path.relative(process.cwd(), OUT)}`);
