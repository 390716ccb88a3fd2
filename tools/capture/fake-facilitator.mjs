// A tiny stand-in for an x402 facilitator, on 127.0.0.1 only.
//
// It exists so the seller middleware never needs a remote facilitator:
//   GET  /supported -> the "exact" scheme on the networks the sellers use (v1 and v2 names)
//   POST /verify    -> 200 {isValid:false, invalidReason:"invalid_payload"}
//   POST /settle    -> 200 {success:false, errorReason:"invalid_payload"}
// Nothing it answers can make a seller deliver: verification never succeeds.
import http from "node:http";
import { createHash } from "node:crypto";

const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

// base58 (Bitcoin alphabet) of raw bytes.
export function base58(bytes) {
  let n = BigInt("0x" + Buffer.from(bytes).toString("hex"));
  let out = "";
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = "1" + out;
  }
  return out;
}

// A deterministic, made-up 32-byte Solana address for a label (no key behind it).
export function fakeSolanaAddress(label) {
  return base58(createHash("sha256").update(`payability-capture:${label}`).digest());
}

// A deterministic, made-up EVM address for a label (lower-case hex, no key behind it).
export function fakeEvmAddress(label) {
  return "0x" + createHash("sha256").update(`payability-capture:${label}`).digest("hex").slice(0, 40);
}

export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const BASE_MAINNET = "eip155:8453";
export const BASE_SEPOLIA = "eip155:84532";

export const FEE_PAYER = fakeSolanaAddress("facilitator-fee-payer");

function supported() {
  const svmExtra = { feePayer: FEE_PAYER };
  return {
    kinds: [
      { x402Version: 2, scheme: "exact", network: SOLANA_MAINNET, extra: svmExtra },
      { x402Version: 2, scheme: "exact", network: SOLANA_DEVNET, extra: svmExtra },
      { x402Version: 2, scheme: "exact", network: BASE_MAINNET },
      { x402Version: 2, scheme: "exact", network: BASE_SEPOLIA },
      { x402Version: 1, scheme: "exact", network: "solana", extra: svmExtra },
      { x402Version: 1, scheme: "exact", network: "solana-devnet", extra: svmExtra },
      { x402Version: 1, scheme: "exact", network: "base" },
      { x402Version: 1, scheme: "exact", network: "base-sepolia" },
    ],
    extensions: [],
    signers: {},
  };
}

// Starts the fake facilitator on 127.0.0.1:port. Resolves to {url, calls, close}.
export function startFakeFacilitator(port) {
  const calls = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const path = new URL(req.url, "http://127.0.0.1").pathname.replace(/^\/facilitator/, "");
      calls.push(`${req.method} ${path}`);
      let status = 200;
      let out;
      if (req.method === "GET" && path === "/supported") {
        out = supported();
      } else if (req.method === "POST" && path === "/verify") {
        out = { isValid: false, invalidReason: "invalid_payload", payer: "" };
      } else if (req.method === "POST" && path === "/settle") {
        out = { success: false, errorReason: "invalid_payload", transaction: "", network: "" };
      } else {
        status = 404;
        out = { error: "not_found" };
      }
      const text = JSON.stringify(out);
      res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${port}/facilitator`,
        calls,
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}
