// The real payability binary: built from this checkout with `go build`, run
// as a subprocess. Only loopback URLs are ever passed to it.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function run(file, args, opts = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 16 << 20, timeout: 120_000, ...opts }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

// build compiles cmd/payability into a temporary directory; resolves to
// {bin, dir, cleanup}.
export async function build() {
  const dir = await mkdtemp(path.join(tmpdir(), "payability-interop-"));
  const bin = path.join(dir, "payability");
  const r = await run("go", ["build", "-o", bin, "./cmd/payability"], { cwd: ROOT, timeout: 600_000 });
  if (r.code !== 0) throw new Error(`go build failed:\n${r.stderr}`);
  return { bin, dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

// cli runs one payability command; resolves to {code, stdout, stderr}.
export function cli(bin, ...args) {
  return run(bin, args);
}

// cliJSON runs an op with --json and parses its report.
export async function cliJSON(bin, op, url) {
  const r = await run(bin, [op, "--json", "--allow-private", url]);
  if (r.code !== 0) throw new Error(`payability ${op} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// serve starts `payability serve --addr 127.0.0.1:0 …args` and resolves,
// once it listens, to {url, stderr(), stop()}; it rejects if serve exits
// first (with its stderr in the message).
export function serve(bin, args) {
  const child = spawn(bin, ["serve", "--addr", "127.0.0.1:0", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`payability serve did not start:\n${stderr}`));
    }, 60_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const m = stderr.match(/serving on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          stderr: () => stderr,
          stop: () =>
            new Promise((done) => {
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`payability serve exited ${code}:\n${stderr}`), { exitCode: code, stderr }));
    });
  });
}
