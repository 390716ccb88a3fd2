// The official MCP TypeScript SDK's client over streamable HTTP: the built
// `payability mcp --http` on loopback, with a bearer token and one allowed
// browser origin. A request without the token is refused (401), one from an
// origin that is neither loopback nor listed is refused (403, the transport's
// Origin rule), and the authenticated client lists and calls the tools.
// Every connection is on 127.0.0.1.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const workdir = mkdtempSync(path.join(tmpdir(), "payability-mcp-http-"));
const bin = path.join(workdir, "payability");
const token = "interop-token-0123456789abcdef";

let server, endpoint, seller;

function build() {
  return new Promise((resolve) => {
    execFile("go", ["build", "-o", bin, "./cmd/payability"], { cwd: root, maxBuffer: 16 << 20, timeout: 300_000 },
      (err, _stdout, stderr) => resolve({ code: err ? 1 : 0, stderr }));
  });
}

// A seller that answers every request with a 402 challenge.
function startSeller() {
  const s = http.createServer((req, res) => {
    const doc = {
      x402Version: 2, resource: { url: `http://${req.headers.host}${req.url}` },
      accepts: [{ scheme: "exact", network: "eip155:8453", amount: "1000",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
        maxTimeoutSeconds: 60, extra: { name: "USD Coin", version: "2" } }],
    };
    res.writeHead(402, { "payment-required": Buffer.from(JSON.stringify(doc)).toString("base64") }).end("{}");
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve({ s, url: `http://127.0.0.1:${s.address().port}/api` })));
}

function connect(headers) {
  const client = new Client({ name: "payability-mcp-interop-http", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } });
  return client.connect(transport).then(() => client);
}

before(async () => {
  const b = await build();
  assert.equal(b.code, 0, `go build failed:\n${b.stderr}`);
  seller = await startSeller();
  server = spawn(bin, ["mcp", "--http", "127.0.0.1:0", "--allow-private", "--token-env", "PAYABILITY_INTEROP_TOKEN",
    "--allow-origin", "https://agent.example"], { env: { ...process.env, PAYABILITY_INTEROP_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] });
  // The server prints its address once it listens: wait for that line.
  endpoint = await new Promise((resolve, reject) => {
    let err = "";
    server.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/streamable HTTP on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    server.on("exit", (code) => reject(new Error(`payability mcp exited ${code}: ${err}`)));
  });
});

after(async () => {
  server?.kill("SIGTERM");
  seller?.s.close();
  rmSync(workdir, { recursive: true, force: true });
});

test("without the bearer token the client cannot connect (401)", async () => {
  await assert.rejects(connect({}));
  const res = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }) });
  assert.equal(res.status, 401);
  assert.ok(!(await res.text()).includes(token));
});

test("an origin that is neither loopback nor listed is refused (403)", async () => {
  await assert.rejects(connect({ Authorization: `Bearer ${token}`, Origin: "https://evil.example" }));
  const res = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`, origin: "https://evil.example" }, body: "{}" });
  assert.equal(res.status, 403);
  const body = await res.json();
  assert.equal(body.jsonrpc, "2.0");
  assert.match(body.error.message, /^origin_refused: /);
});

test("with the token, from a listed origin, the client lists and calls the tools", async () => {
  const client = await connect({ Authorization: `Bearer ${token}`, Origin: "https://agent.example" });
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 8);
    const res = await client.callTool({ name: "x402_check", arguments: { url: seller.url } });
    assert.ok(!res.isError, JSON.stringify(res.content));
    assert.equal(res.structuredContent.op, "check");
  } finally {
    await client.close();
  }
});

test("health and readiness answer without the token", async () => {
  for (const p of ["healthz", "readyz"]) {
    const res = await fetch(new URL(p, endpoint));
    assert.equal(res.status, 200, p);
    assert.deepEqual(await res.json(), { status: "ok" });
  }
});
