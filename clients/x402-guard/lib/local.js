// The local decision source: the payability binary, `payability preflight
// --json`, from PATH (or options.binary), with the request's method and
// body and the entry's network, scheme and asset, and the caller's budget.
import { spawn } from "node:child_process";
import { GuardError, readPreflight } from "./record.js";

// A preflight record is a few kilobytes; more is no record.
const MAX_OUTPUT = 1 << 20;

// preflightArgs is the command line for one request.
export function preflightArgs(req, opts) {
  const args = ["preflight", "--json"];
  if (opts.allowPrivate) args.push("--allow-private");
  if (req.method) args.push("--method", req.method);
  if (req.body !== undefined && req.body !== null) args.push("--body", req.body);
  if (req.network) args.push("--network", req.network);
  if (req.scheme) args.push("--scheme", req.scheme);
  if (req.asset) args.push("--asset", req.asset);
  if (opts.maxAmount) args.push("--max-amount", opts.maxAmount);
  // "--" ends the flags: the URL is never read as one.
  args.push("--", req.url);
  return args;
}

// localSource runs the binary; it resolves to readPreflight's result or
// rejects with a GuardError (preflight_unavailable). signal kills the child.
export function localSource(opts = {}) {
  const binary = opts.binary ?? "payability";
  return {
    name: "local",
    decide(req, signal) {
      return new Promise((resolve, reject) => {
        let child;
        try {
          child = spawn(binary, preflightArgs(req, opts), { stdio: ["ignore", "pipe", "ignore"], signal, windowsHide: true });
        } catch {
          reject(new GuardError("preflight_unavailable"));
          return;
        }
        const chunks = [];
        let size = 0;
        child.stdout.on("data", (c) => {
          size += c.length;
          if (size > MAX_OUTPUT) child.kill("SIGKILL");
          else chunks.push(c);
        });
        child.once("error", () => reject(new GuardError("preflight_unavailable")));
        child.once("close", (code) => {
          // 0 GO, 10 HOLD, 20 STOP; anything else (2 a refused URL or bad
          // usage, 1 an internal error, a signal) is no decision.
          if (![0, 10, 20].includes(code) || size > MAX_OUTPUT) return reject(new GuardError("preflight_unavailable"));
          let rec;
          try {
            rec = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return reject(new GuardError("preflight_unavailable"));
          }
          try {
            const d = readPreflight(rec);
            if ({ GO: 0, HOLD: 10, STOP: 20 }[d.decision] !== code) throw new GuardError("preflight_unavailable");
            resolve(d);
          } catch (e) {
            reject(e);
          }
        });
      });
    },
  };
}
