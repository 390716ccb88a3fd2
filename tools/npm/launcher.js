#!/usr/bin/env node
// payability's npm launcher: runs the binary of this platform, which npm
// installed as one of the optional dependencies @payability/<platform>-<arch>.
// It passes the arguments, stdin, stdout and stderr through untouched (so
// `npx payability mcp` speaks MCP over stdio) and exits as the binary did.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const key = `${process.platform}-${process.arch}`;
const supported = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"];
const pkg = `@payability/${key}`;

let bin;
try {
  const dir = path.dirname(require.resolve(`${pkg}/package.json`));
  bin = path.join(dir, "bin", process.platform === "win32" ? "payability.exe" : "payability");
} catch {
  const why = supported.includes(key)
    ? `${pkg} is not installed: npm installs it as an optional dependency, so an install with --omit=optional (or --no-optional) skipped it; reinstall without that flag`
    : `payability publishes binaries for ${supported.join(", ")} only; on other platforms use a release archive or go install`;
  process.stderr.write(`payability: no binary for ${key}: ${why}\n`);
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
const forward = (signal) => () => child.kill(signal);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward(signal));
child.on("error", (err) => {
  process.stderr.write(`payability: cannot run ${bin}: ${err.code || "failed"}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, as a shell would report it.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
