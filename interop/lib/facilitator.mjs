// A facilitator written for the test, on 127.0.0.1: it speaks the x402
// facilitator API (GET /supported, POST /verify, POST /settle) and checks
// the transaction a real client built against the requirements it was
// given, as a facilitator must. It settles nothing: "settling" records the
// transaction id (derived from the message) and the transfer it makes with
// the fake RPC node, which then answers getTransaction for it.
import http from "node:http";
import crypto from "node:crypto";
import {
  MEMO_PROGRAMS,
  SOLANA_DEVNET,
  SOLANA_MAINNET,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  associatedTokenAccount,
  base58,
  close,
  listen,
  readTransaction,
  signedBy,
} from "./solana.mjs";
import { checkEvm, isEvm, txHashOf } from "./evm.mjs";

const TRANSFER_CHECKED = 12;

// The kinds of /supported: exact on Solana (v1 and v2 names) with our fee
// payer, and on Base (for the seller middleware's own start-up checks).
function kinds(feePayer, networks) {
  const svm = { feePayer };
  const all = [
    { x402Version: 2, scheme: "exact", network: SOLANA_MAINNET, extra: svm },
    { x402Version: 2, scheme: "exact", network: SOLANA_DEVNET, extra: svm },
    { x402Version: 2, scheme: "exact", network: "eip155:8453" },
    { x402Version: 2, scheme: "exact", network: "eip155:84532" },
    { x402Version: 1, scheme: "exact", network: "solana", extra: svm },
    { x402Version: 1, scheme: "exact", network: "solana-devnet", extra: svm },
    { x402Version: 1, scheme: "exact", network: "base" },
    { x402Version: 1, scheme: "exact", network: "base-sepolia" },
  ];
  return all.filter((k) => !networks || networks.includes(k.network));
}

// check verifies a payment: it returns {payer} or {reason}.
export async function check(version, payload, req, feePayer) {
  if (!payload || payload.x402Version !== version) return { reason: "invalid_x402_version" };
  if (req.scheme !== "exact") return { reason: "unsupported_scheme" };
  if (version === 2) {
    if (!payload.accepted) return { reason: "invalid_payload" };
    if (payload.accepted.scheme !== req.scheme) return { reason: "unsupported_scheme" };
    if (payload.accepted.network !== req.network) return { reason: "invalid_network" };
  } else if (payload.scheme !== req.scheme || payload.network !== req.network) {
    return { reason: "invalid_network" };
  }
  if (req.extra?.feePayer !== feePayer) return { reason: "invalid_exact_svm_payload_missing_fee_payer" };
  let tx;
  try {
    tx = readTransaction(payload.payload?.transaction);
  } catch {
    return { reason: "invalid_exact_svm_payload_transaction" };
  }
  if (tx.accounts[0] !== feePayer) return { reason: "invalid_exact_svm_fee_payer_mismatch" };
  if (tx.signatures[feePayer]) return { reason: "invalid_exact_svm_payload_fee_payer_already_signed" };
  const transfers = tx.instructions.filter(
    (ix) => (ix.program === TOKEN_PROGRAM || ix.program === TOKEN_2022_PROGRAM) && ix.data[0] === TRANSFER_CHECKED,
  );
  if (transfers.length !== 1 || transfers[0].data.length < 10 || transfers[0].accounts.length < 4) {
    return { reason: "invalid_exact_svm_payload_no_transfer_instruction" };
  }
  const t = transfers[0];
  const [, mint, destination, authority] = t.accounts;
  const amount = Buffer.from(t.data.subarray(1, 9)).readBigUInt64LE();
  const price = BigInt(version === 2 ? req.amount : req.maxAmountRequired);
  if (mint !== req.asset) return { reason: "invalid_exact_svm_payload_mint_mismatch" };
  if (destination !== (await associatedTokenAccount(req.payTo, req.asset, t.program))) {
    return { reason: "invalid_exact_svm_payload_recipient_mismatch" };
  }
  if (amount !== price) return { reason: "invalid_exact_svm_payload_amount_mismatch" };
  if (authority === feePayer) return { reason: "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds" };
  if (!signedBy(authority, tx.messageBytes, tx.signatures[authority])) {
    return { reason: "invalid_exact_svm_payload_signature_invalid" };
  }
  const memos = tx.instructions.filter((ix) => MEMO_PROGRAMS.includes(ix.program));
  if (req.extra?.memo !== undefined) {
    if (memos.length !== 1) return { reason: "invalid_exact_svm_payload_memo_count" };
    if (Buffer.from(memos[0].data).toString("utf8") !== req.extra.memo) return { reason: "invalid_exact_svm_payload_memo_mismatch" };
  }
  return { payer: authority, tx, transfer: { program: t.program, source: t.accounts[0], mint, destination, authority, amount } };
}

// checkAny verifies a payment on the network its requirements name: EVM
// (EIP-3009, lib/evm.mjs) or Solana (check).
const checkAny = (version, payload, req, feePayer) =>
  isEvm(req.network) ? checkEvm(version, payload, req) : check(version, payload, req, feePayer);

// Starts the facilitator. options: feePayer (address), rpc (the fake node,
// told about each settlement), evmRpc (the fake EVM node, told about each
// EVM settlement), networks (restricts /supported), mode
// ("ok" | "invalid" | "settle-fails"; changeable through .mode).
export async function startFacilitator({ feePayer, rpc, evmRpc, networks, mode = "ok" }) {
  const calls = [];
  const settledMessages = new Set();
  const f = { calls, mode };
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      const path = new URL(req.url, "http://127.0.0.1").pathname;
      let status = 200;
      let out;
      let parsed = {};
      try {
        parsed = body ? JSON.parse(body) : {};
      } catch {
        status = 400;
      }
      calls.push({ method: req.method, path, body: parsed });
      const { x402Version, paymentPayload, paymentRequirements } = parsed;
      if (req.method === "GET" && path === "/supported") {
        out = { kinds: kinds(feePayer, networks), extensions: [], signers: { "solana:*": [feePayer] } };
      } else if (req.method === "POST" && path === "/verify") {
        const r = await checkAny(x402Version, paymentPayload, paymentRequirements ?? {}, feePayer);
        out = f.mode === "invalid"
          ? { isValid: false, invalidReason: "insufficient_funds", payer: r.payer ?? "" }
          : r.reason ? { isValid: false, invalidReason: r.reason, payer: "" } : { isValid: true, payer: r.payer };
      } else if (req.method === "POST" && path === "/settle") {
        const r = await checkAny(x402Version, paymentPayload, paymentRequirements ?? {}, feePayer);
        const network = paymentRequirements?.network ?? "";
        if (r.reason || f.mode === "settle-fails") {
          out = { success: false, errorReason: r.reason ?? "invalid_exact_svm_transaction_failed", transaction: "", network, payer: r.payer ?? "" };
        } else if (r.authorization) {
          // EIP-3009: an authorization's nonce is used once.
          const hash = txHashOf(r.authorization);
          if (settledMessages.has(hash)) {
            out = { success: false, errorReason: "nonce_already_used", transaction: "", network, payer: r.payer };
          } else {
            settledMessages.add(hash);
            evmRpc?.settled(hash, { token: paymentRequirements.asset, from: r.payer, to: paymentRequirements.payTo, value: r.authorization.value });
            out = { success: true, transaction: hash, network, payer: r.payer };
          }
        } else {
          const key = Buffer.from(r.tx.messageBytes).toString("base64");
          if (settledMessages.has(key)) {
            out = { success: false, errorReason: "duplicate_settlement", transaction: "", network, payer: r.payer };
          } else {
            settledMessages.add(key);
            const sig = base58(crypto.createHash("sha512").update(r.tx.messageBytes).digest());
            rpc?.settled(sig, { feePayer, ...r.transfer });
            out = { success: true, transaction: sig, network, payer: r.payer };
          }
        }
      } else {
        status = 404;
        out = { error: "not found" };
      }
      const text = JSON.stringify(out ?? {});
      res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  f.url = await listen(server);
  f.close = () => close(server);
  f.callsTo = (path) => calls.filter((c) => c.path === path);
  return f;
}
