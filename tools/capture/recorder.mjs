// Raw HTTP recorder: one request, one capture in the corpus capture format
// (docs/corpus-format.md). No Accept-Encoding, no redirects followed, no
// keep-alive, no headers beyond Host, User-Agent and what a probe names.
import http from "node:http";

export const CHECK_UA = "payability/0.1.0";
export const PROBE_UA = "ExchangeRebel-RailProbe/1.0";

const TIMEOUT_MS = 5000;
const BODY_CAP = 65536;
const KEPT_HEADERS = new Set(["payment-required", "content-type", "location", "payment-response", "x-payment-response"]);
// A lint recording also keeps the headers x402-lint's HTTP rules read.
export const LINT_HEADERS = new Set([...KEPT_HEADERS, "cache-control", "access-control-allow-origin", "access-control-expose-headers"]);

const PROBE_TX = "PROBE-INVALID-NOT-A-REAL-TX-SIGNATURE-000000000000000000000000000000000000";
const PROBE_MEMO = "probe-memo-not-bound-to-any-challenge";
const FACILITATOR_PAYLOAD =
  '{"x402Version":2,"scheme":"exact","network":"solana","payload":{"signature":"PROBE-INVALID-SIGNATURE","authorization":{"from":"PROBE","to":"PROBE","value":0}}}';
const FACILITATOR_HEADER = Buffer.from(FACILITATOR_PAYLOAD, "utf8").toString("base64");

// The seven probes of the rail-probe inventory, in inventory order.
export const PROBES = [
  { id: "baseline_get", method: "GET", headers: {} },
  { id: "head", method: "HEAD", headers: {} },
  { id: "post_unpaid", method: "POST", json: true, headers: {} },
  { id: "direct", method: "POST", json: true, headers: { "X-Payment-Tx": PROBE_TX, "X-Payment-Memo": PROBE_MEMO } },
  { id: "facilitator", method: "POST", json: true, headers: { "PAYMENT-SIGNATURE": FACILITATOR_HEADER } },
  { id: "missing_memo", method: "POST", json: true, headers: { "X-Payment-Tx": PROBE_TX } },
  { id: "bogus", method: "POST", json: true, headers: { "X-PAYMENT": "bogus-not-a-payment-header" } },
];

function bodyField(buf) {
  if (buf.length === 0) return {};
  try {
    return { body_text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(buf) };
  } catch {
    return { body_base64: buf.toString("base64") };
  }
}

// Sends one request and resolves to a capture object (never rejects).
export function capture(url, { method = "GET", userAgent, headers = {}, json = false, keep = KEPT_HEADERS } = {}) {
  const u = new URL(url);
  if (u.hostname !== "127.0.0.1") throw new Error(`recorder: refusing non-loopback URL ${url}`);
  const body = json ? Buffer.from("{}", "utf8") : null;
  const reqHeaders = { "User-Agent": userAgent, ...headers };
  if (body) {
    reqHeaders["Content-Type"] = "application/json";
    reqHeaders["Content-Length"] = String(body.length);
  }
  return new Promise((resolve) => {
    let done = false;
    const finish = (c) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve(c);
      }
    };
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        headers: reqHeaders,
        agent: false,
      },
      (res) => {
        const kept = {};
        const raw = res.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) {
          const name = raw[i].toLowerCase();
          if (keep.has(name) && !(name in kept)) kept[name] = raw[i + 1];
        }
        const chunks = [];
        let size = 0;
        let over = false;
        res.on("data", (c) => {
          if (over) return;
          chunks.push(c);
          size += c.length;
          if (size > BODY_CAP) {
            over = true;
            res.destroy();
            const cap = { outcome: "over_cap", status: res.statusCode };
            if (Object.keys(kept).length > 0) cap.headers = kept;
            finish(cap);
          }
        });
        res.on("end", () => {
          const cap = { outcome: "ok", status: res.statusCode };
          if (Object.keys(kept).length > 0) cap.headers = kept;
          finish({ ...cap, ...bodyField(Buffer.concat(chunks)) });
        });
        res.on("error", () => finish({ outcome: "failed" }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ outcome: "timeout" });
    }, TIMEOUT_MS);
    req.on("error", () => finish({ outcome: "failed" }));
    req.end(body ?? undefined);
  });
}

// check: one GET.
export async function recordCheck(url) {
  return [await capture(url, { userAgent: CHECK_UA })];
}

// memo: two back-to-back GETs.
export async function recordMemo(url) {
  const first = await capture(url, { userAgent: CHECK_UA });
  const second = await capture(url, { userAgent: CHECK_UA });
  return [first, second];
}

// probe: the seven probes in inventory order; if the baseline GET fails, the rest are not sent.
export async function recordProbe(url) {
  const out = [];
  for (const p of PROBES) {
    if (out.length > 0 && out[0].outcome !== "ok") {
      out.push({ outcome: "not_sent" });
      continue;
    }
    out.push(await capture(url, { method: p.method, userAgent: PROBE_UA, headers: p.headers, json: p.json }));
  }
  return out;
}

// lint: one request as `payability lint` sends it: GET, or for a POST route
// key POST with the body {} as application/json; the lint headers kept.
export async function recordLint(url, method) {
  return [await capture(url, { method, userAgent: CHECK_UA, json: method === "POST", keep: LINT_HEADERS })];
}
