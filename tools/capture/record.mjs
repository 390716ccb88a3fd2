// Records what real x402 seller middleware answers, as payability corpus case inputs.
//
//   cd tools/capture && npm ci && node record.mjs
//
// Writes internal/corpus/gen/captured/x402-express-v2.json and x402-express-v1.json
// (JSON arrays of cases without `expected`; docs/corpus-format.md). Everything runs on
// 127.0.0.1 with fixed ports, so the recorded URLs are stable; see README.md.
import { refused } from "./loopback-guard.mjs"; // must stay the first import
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const { startFakeFacilitator } = await import("./fake-facilitator.mjs");
const { CONFIGS, V1, V2, configUrl, configNote, startSeller } = await import("./sellers.mjs");
const { recordCheck, recordMemo, recordProbe } = await import("./recorder.mjs");

const FACILITATOR_PORT = 48401;
const OUT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../internal/corpus/gen/captured");

const OPS = [
  ["check", recordCheck],
  ["memo", recordMemo],
  ["probe", recordProbe],
];

// Header names sorted so the files are byte-stable across runs.
function tidy(capture) {
  if (!capture.headers) return capture;
  const headers = {};
  for (const k of Object.keys(capture.headers).sort()) headers[k] = capture.headers[k];
  return { ...capture, headers };
}

process.on("unhandledRejection", (err) => {
  console.error("unhandled rejection:", err);
});

const facilitator = await startFakeFacilitator(FACILITATOR_PORT);
const byImpl = new Map([
  [V2, []],
  [V1, []],
]);
const ids = new Set();

for (const c of CONFIGS) {
  const seller = await startSeller(c, facilitator.url);
  try {
    const url = configUrl(c);
    for (const [op, record] of OPS) {
      const id = `captured-${c.impl.slug}-${c.network}-${c.route}-${op}`;
      if (ids.has(id)) throw new Error(`duplicate case id ${id}`);
      ids.add(id);
      const captures = (await record(url)).map(tidy);
      byImpl.get(c.impl).push({
        id,
        provenance: `captured:${c.impl.name}@${c.impl.version}`,
        op,
        note: configNote(c),
        url,
        captures,
      });
      console.log(`${id}: ${captures.map((x) => x.status ?? x.outcome).join(" ")}`);
    }
  } finally {
    await seller.close();
  }
}
await facilitator.close();

if (refused.length > 0) {
  console.error(`loopback guard refused ${refused.length} non-loopback connection(s): ${[...new Set(refused)].join(", ")}`);
  console.error("nothing written");
  process.exit(1);
}

await mkdir(OUT_DIR, { recursive: true });
for (const [impl, cases] of byImpl) {
  const file = path.join(OUT_DIR, impl.file);
  await writeFile(file, JSON.stringify(cases, null, 2) + "\n");
  console.log(`wrote ${cases.length} cases to ${path.relative(process.cwd(), file)}`);
}
console.log(`facilitator calls: ${[...new Set(facilitator.calls)].join(", ") || "none"}`);
process.exit(0);
