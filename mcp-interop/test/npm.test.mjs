// payability from npm, without Go: the packages tools/npm writes from a
// release's dist/ are packed, installed from the tarballs into scratch
// directories (nothing is fetched: --offline), and run as a user runs them:
// `npx payability version`, `npm i -g`, and `npx payability mcp` driven by the
// official MCP TypeScript SDK client.
//
// It needs a release snapshot: PAYABILITY_RELEASE_DIST names its dist/
// (.ci/run runs tools/release/snapshot.sh first). Without it the tests skip.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const dist = process.env.PAYABILITY_RELEASE_DIST;
const skip = dist ? false : "PAYABILITY_RELEASE_DIST is not set (run tools/release/snapshot.sh)";
const key = `${process.platform}-${process.arch}`;

function run(file, args, opts = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 16 << 20, timeout: 300_000, ...opts }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

let work, version, tarballs, project, env;

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), "payability-npm-"));
  version = JSON.parse(readFileSync(path.join(dist, "metadata.json"), "utf8")).version;
  const pkgs = path.join(work, "pkgs");
  const g = await run("go", ["run", "./tools/npm", "-dist", dist, "-out", pkgs], { cwd: root });
  assert.equal(g.code, 0, `tools/npm failed:\n${g.stderr}`);
  // npm with no registry to reach and a cache of its own.
  env = { ...process.env, npm_config_cache: path.join(work, "cache"), npm_config_registry: "http://127.0.0.1:9/",
    npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
  const packed = path.join(work, "tarballs");
  mkdirSync(packed);
  tarballs = {};
  for (const dir of ["payability", key]) {
    const p = await run("npm", ["pack", "--pack-destination", packed, path.join(pkgs, dir)], { env });
    assert.equal(p.code, 0, `npm pack ${dir}:\n${p.stderr}`);
    tarballs[dir] = path.join(packed, p.stdout.trim().split("\n").pop());
  }
  assert.deepEqual(readdirSync(packed).sort(), [`payability-${key}-${version}.tgz`, `payability-${version}.tgz`].sort());
  project = path.join(work, "project");
  mkdirSync(project);
  writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "scratch", version: "0.0.0", private: true }));
  const i = await run("npm", ["install", "--offline", "--no-save", tarballs[key], tarballs.payability], { cwd: project, env });
  assert.equal(i.code, 0, `npm install:\n${i.stderr}`);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test("npx payability version prints the release's version", { skip }, async () => {
  const r = await run("npx", ["--offline", "payability", "version"], { cwd: project, env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split("\n")[0], `payability ${version}`);
});

test("npm i -g puts payability on the prefix's PATH", { skip }, async () => {
  const prefix = path.join(work, "prefix");
  const i = await run("npm", ["install", "-g", "--offline", "--prefix", prefix, tarballs[key], tarballs.payability], { env });
  assert.equal(i.code, 0, `npm install -g:\n${i.stderr}`);
  const bin = process.platform === "win32" ? path.join(prefix, "payability.cmd") : path.join(prefix, "bin", "payability");
  const r = await run(bin, ["version"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split("\n")[0], `payability ${version}`);
});

test("the launcher passes the exit status through", { skip }, async () => {
  const r = await run("npx", ["--offline", "payability", "nosuch"], { cwd: project, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown command "nosuch"/);
});

test("without its platform package the launcher says what is missing", { skip }, async () => {
  const bare = path.join(work, "bare");
  mkdirSync(bare);
  writeFileSync(path.join(bare, "package.json"), JSON.stringify({ name: "bare", version: "0.0.0", private: true }));
  const i = await run("npm", ["install", "--offline", "--no-save", "--omit=optional", tarballs.payability], { cwd: bare, env });
  assert.equal(i.code, 0, `npm install --omit=optional:\n${i.stderr}`);
  const r = await run("npx", ["--offline", "payability", "version"], { cwd: bare, env });
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`payability: no binary for ${key}: @payability/${key} is not installed`));
});

test("npx payability mcp answers the MCP TypeScript SDK client", { skip }, async () => {
  const client = new Client({ name: "payability-npm-interop", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: "npx", args: ["--offline", "payability", "mcp"], cwd: project, env, stderr: "inherit" }));
  try {
    const info = client.getServerVersion();
    assert.equal(info.name, "payability");
    assert.equal(info.version, version);
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "x402_preflight"), JSON.stringify(tools.map((t) => t.name)));
    const res = await client.callTool({ name: "x402_terms_hash", arguments: { challenge: "not a challenge" } });
    assert.equal(res.isError, true);
  } finally {
    await client.close();
  }
});
