// Loopback only. Imported first by every test file, before any x402 package:
// every outgoing TCP connection (node:net, so also node:http, node:https and
// the built-in fetch), every DNS lookup and every fetch() call must name
// 127.0.0.1, ::1 or localhost, or it throws. The payability binary is only
// ever given loopback URLs (facilitator, RPC, targets).
import net from "node:net";
import dns from "node:dns";

const allowed = (host) => ["127.0.0.1", "::1", "localhost"].includes(String(host).replace(/^\[(.*)\]$/, "$1"));

export const blocked = [];

function block(what) {
  blocked.push(what);
  return Object.assign(new Error(`interop guard: no traffic to ${what} (loopback only)`), { code: "EINTEROPGUARD" });
}

// The destination host of net.Socket#connect's argument forms.
function destination(args) {
  let [first, second] = args;
  if (Array.isArray(first)) [first, second] = first;
  if (first && typeof first === "object") return first.path ? null : (first.host ?? "localhost");
  if (typeof first === "string" && !/^\d+$/.test(first)) return null; // a unix socket path
  return typeof second === "string" ? second : "localhost";
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const host = destination(args);
  if (host !== null && !allowed(host)) throw block(host);
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function (hostname, ...rest) {
  if (!allowed(hostname)) throw block(`dns:${hostname}`);
  return lookup.call(this, hostname, ...rest);
};

const realFetch = globalThis.fetch;
globalThis.fetch = function (input, init) {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (!allowed(url.hostname)) return Promise.reject(block(url.origin));
  return realFetch(input, init);
};

// No proxy, ever: the suite and the binary it starts talk to loopback directly.
for (const name of Object.keys(process.env)) {
  if (/^(https?|all|no)_proxy$/i.test(name)) delete process.env[name];
}
