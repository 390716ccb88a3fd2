// The official MCP TypeScript SDK's client spawns `payability mcp` over stdio,
// lists its tools and calls x402_preflight against loopback sellers. Every
// connection is on 127.0.0.1.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const workdir = mkdtempSync(path.join(tmpdir(), "payability-mcp-"));
const bin = path.join(workdir, "payability");

function run(file, args, opts = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 16 << 20, timeout: 300_000, ...opts }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

// An EVM exact entry that lints clean (x402-lint/v1).
function challenge(url) {
  const doc = {
    x402Version: 2,
    error: "Payment required",
    resource: { url },
    accepts: [{
      scheme: "exact", network: "eip155:8453", amount: "1000",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
      maxTimeoutSeconds: 60, extra: { name: "USD Coin", version: "2" },
    }],
  };
  return { doc, header: Buffer.from(JSON.stringify(doc)).toString("base64") };
}

// seller answers GET (and HEAD) with a challenge; with a payment header it
// refuses (closed) or serves (open); POST is 405.
function seller(mode) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const url = `http://${req.headers.host}${req.url}`;
    const sig = req.headers["payment-signature"];
    seen.push({ method: req.method, sig });
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405).end();
      return;
    }
    if (sig && mode === "open") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"data":1}');
      return;
    }
    if (sig === "bogus-not-a-payment-header") {
      res.writeHead(400).end();
      return;
    }
    if (sig) {
      res.writeHead(402, { "content-type": "application/json" }).end('{"error":"invalid_exact_evm_payload_signature"}');
      return;
    }
    res.writeHead(402, { "payment-required": challenge(url).header, "cache-control": "no-store", "content-type": "application/json" }).end("{}");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    server, seen, url: `http://127.0.0.1:${server.address().port}/api/paid`,
  })));
}

let client, closed, open;

before(async () => {
  const b = await run("go", ["build", "-o", bin, "./cmd/payability"], { cwd: root });
  assert.equal(b.code, 0, `go build failed:\n${b.stderr}`);
  closed = await seller("closed");
  open = await seller("open");
  client = new Client({ name: "payability-mcp-interop", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--allow-private"], stderr: "inherit" }));
});

after(async () => {
  await client?.close();
  closed?.server.close();
  open?.server.close();
  rmSync(workdir, { recursive: true, force: true });
});

test("lists the eight tools with input schemas and honest annotations", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["x402_check", "x402_lint", "x402_memo", "x402_preflight", "x402_probe",
    "x402_reliability", "x402_terms_hash", "x402_verify_report"]);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, "object", t.name);
    // Tools that may POST to a seller are not read-only (an absent hint is false).
    const posts = ["x402_preflight", "x402_probe", "x402_lint"].includes(t.name);
    assert.equal(t.annotations.readOnlyHint ?? false, !posts, t.name);
    assert.equal(t.annotations.destructiveHint, false, t.name);
    const local = t.name === "x402_terms_hash" || t.name === "x402_verify_report";
    assert.equal(t.annotations.openWorldHint, !local, t.name);
    assert.ok(!JSON.stringify(t.inputSchema).includes("allow_private"), t.name);
  }
  const pf = tools.find((t) => t.name === "x402_preflight");
  assert.deepEqual(pf.inputSchema.required, ["url"]);
});

test("x402_preflight says GO for a seller that refuses invalid payments", async () => {
  const res = await client.callTool({ name: "x402_preflight", arguments: { url: closed.url } });
  assert.ok(!res.isError, JSON.stringify(res.content));
  const rec = res.structuredContent;
  assert.equal(rec.document, "x402-preflight/v1");
  assert.equal(rec.decision, "GO", JSON.stringify(rec.reasons));
  assert.deepEqual(rec.reasons, []);
  assert.match(rec.terms_sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual(rec.selected_entry, { leg: "header", index: 0, x402_version: 2, scheme: "exact", network: "eip155:8453" });
  assert.match(res.content[0].text, /^GO {2}no red flag observed at .*; not a guarantee that a payment will settle or be honoured/);
  assert.equal(rec.revision, "2");
  // Revision 2: the structural probe carries the offered entry exactly and
  // an authorization a cheap check cannot tell from a real one (payee,
  // amount, a window around now, a non-zero payer, a signature of valid
  // shape); only signature verification refuses it.
  const offered = challenge("x").doc.accepts[0];
  const p1 = closed.seen.find((s) => s.sig && s.sig !== "bogus-not-a-payment-header");
  const payload = JSON.parse(Buffer.from(p1.sig, "base64").toString());
  assert.equal(payload.x402Version, 2);
  assert.deepEqual(payload.accepted, offered);
  const auth = payload.payload.authorization;
  assert.equal(auth.to, offered.payTo);
  assert.equal(auth.value, offered.amount);
  assert.match(auth.from, /^0x[0-9a-fA-F]{40}$/);
  assert.notEqual(BigInt(auth.from), 0n);
  // The window contains the check time the record states (not this
  // machine's clock now).
  const checked = Math.floor(Date.parse(rec.checked_at) / 1000);
  assert.ok(Number(auth.validAfter) <= checked && checked < Number(auth.validBefore), JSON.stringify(auth));
  assert.match(payload.payload.signature, /^0x[0-9a-f]{128}(1b|1c)$/);
  assert.notEqual(payload.payload.signature, "0x" + "0".repeat(130));
});

test("x402_preflight says STOP fail_open for a seller that serves any payment header", async () => {
  const res = await client.callTool({ name: "x402_preflight", arguments: { url: open.url } });
  assert.ok(!res.isError);
  assert.equal(res.structuredContent.decision, "STOP");
  assert.ok(res.structuredContent.reasons.includes("fail_open"));
});

test("a bad argument is an isError result naming it", async () => {
  const res = await client.callTool({ name: "x402_preflight", arguments: { url: closed.url, max_amount: "1.5" } });
  assert.equal(res.isError, true);
  assert.match(res.content[0].text, /^max_amount: /);
});

test("x402_terms_hash agrees with the preflight record", async () => {
  const pre = await client.callTool({ name: "x402_preflight", arguments: { url: closed.url } });
  const res = await client.callTool({ name: "x402_terms_hash", arguments: { challenge: challenge(closed.url).header } });
  assert.equal(res.structuredContent.entries[0].terms_sha256, pre.structuredContent.terms_sha256);
});
