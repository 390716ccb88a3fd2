// Loopback guard: this recording must never reach anything but 127.0.0.1.
//
// Installed before any seller package is loaded. Every outgoing TCP connection
// (node:net, and therefore node:http, node:https, node:tls and the built-in
// fetch) and every fetch() call is checked; a non-loopback destination throws
// and is remembered, and record.mjs refuses to write anything if one happened.
import net from "node:net";
import dns from "node:dns";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
export const refused = [];

function refuse(what) {
  refused.push(what);
  const err = new Error(`loopback-guard: refused connection to ${what}`);
  err.code = "ELOOPBACKGUARD";
  return err;
}

function hostOf(args) {
  // net.Socket.prototype.connect(options[, cb]) | (port[, host][, cb]) | (path[, cb])
  const [a, b] = args;
  if (Array.isArray(a)) return hostOf(a); // internal normalized form
  if (a && typeof a === "object") {
    if (a.path) return { ipc: true };
    return { host: a.host ?? "localhost" };
  }
  if (typeof a === "string" && !/^\d+$/.test(a)) return { ipc: true };
  return { host: typeof b === "string" ? b : "localhost" };
}

const originalConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const h = hostOf(args);
  if (!h.ipc && !LOOPBACK.has(String(h.host).replace(/^\[|\]$/g, ""))) {
    throw refuse(String(h.host));
  }
  return originalConnect.apply(this, args);
};

const originalLookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, ...rest) {
  if (!LOOPBACK.has(String(hostname))) {
    throw refuse(`dns:${hostname}`);
  }
  return originalLookup.call(this, hostname, ...rest);
};

const originalFetch = globalThis.fetch;
globalThis.fetch = async function guardedFetch(input, init) {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (!LOOPBACK.has(url.hostname.replace(/^\[|\]$/g, ""))) {
    throw refuse(url.origin);
  }
  return originalFetch(input, init);
};

// The recording runs without any proxy configuration.
for (const k of Object.keys(process.env)) {
  if (/^(https?|all|no)_proxy$/i.test(k)) delete process.env[k];
}
