// Base on loopback: a fake EVM JSON-RPC node that answers
// eth_getTransactionReceipt for the transactions the test facilitator
// "settled" (a USDC Transfer log to the payee), and the check an EVM exact
// facilitator makes of an EIP-3009 payment (scheme_exact_evm.md, section 1:
// the signature recovers to authorization.from under the token's EIP-712
// domain, and the authorization pays the requirements). Nothing here
// touches a chain.
import http from "node:http";
import { getAddress, keccak256, recoverTypedDataAddress, toHex } from "viem";
import { close, listen } from "./solana.mjs";

export const BASE = "eip155:8453";
export const BASE_SEPOLIA = "eip155:84532";
export const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
export const USDC_BASE_SEPOLIA = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

const chainIds = { [BASE]: 8453, [BASE_SEPOLIA]: 84532, base: 8453, "base-sepolia": 84532 };
export const isEvm = (network) => network in chainIds;

const authorizationTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};

const topic = (address) => "0x" + address.toLowerCase().replace(/^0x/, "").padStart(64, "0");

// checkEvm verifies an EIP-3009 payment against the requirements; it
// returns {payer, authorization} or {reason}. A payload of the wrong shape
// (a number that is no number, a missing field) is a reason, never a throw.
export async function checkEvm(version, payload, req) {
  try {
    return await checkEvmPayload(version, payload, req);
  } catch {
    return { reason: "invalid_exact_evm_payload" };
  }
}

async function checkEvmPayload(version, payload, req) {
  if (!payload || payload.x402Version !== version) return { reason: "invalid_x402_version" };
  const network = version === 2 ? payload.accepted?.network : payload.network;
  if (req.scheme !== "exact" || (version === 2 ? payload.accepted?.scheme : payload.scheme) !== "exact") return { reason: "unsupported_scheme" };
  if (network !== req.network) return { reason: "invalid_network" };
  const { signature, authorization: a } = payload.payload ?? {};
  if (!a || typeof signature !== "string") return { reason: "invalid_exact_evm_payload" };
  if (!req.extra?.name || !req.extra?.version) return { reason: "invalid_exact_evm_payload_missing_domain" };
  let signer;
  try {
    signer = await recoverTypedDataAddress({
      domain: { name: req.extra.name, version: req.extra.version, chainId: chainIds[req.network], verifyingContract: getAddress(req.asset) },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: { ...a, value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore) },
      signature,
    });
  } catch {
    return { reason: "invalid_exact_evm_payload_signature" };
  }
  if (signer.toLowerCase() !== a.from.toLowerCase()) return { reason: "invalid_exact_evm_payload_signature" };
  if (a.to.toLowerCase() !== req.payTo.toLowerCase()) return { reason: "invalid_exact_evm_payload_recipient_mismatch" };
  if (BigInt(a.value) !== BigInt(version === 2 ? req.amount : req.maxAmountRequired)) return { reason: "invalid_exact_evm_payload_authorization_value" };
  if (BigInt(a.validBefore) <= BigInt(Math.floor(Date.now() / 1000))) return { reason: "invalid_exact_evm_payload_authorization_valid_before" };
  return { payer: getAddress(a.from), authorization: a };
}

// txHashOf is the transaction a settlement "broadcasts": one per
// authorization nonce and payer, as on chain.
export const txHashOf = (a) => keccak256(toHex(`${a.from.toLowerCase()}:${a.nonce}`));

// startEvmRpc starts the fake node. settled(hash, {token, from, to, value})
// records a successful transfer; lookups lists the hashes asked for.
export async function startEvmRpc() {
  const receipts = new Map();
  const rpc = { lookups: [], methods: [] };
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      let call = {};
      try {
        call = JSON.parse(body);
      } catch {}
      rpc.methods.push(call.method);
      let out;
      if (call.method === "eth_getTransactionReceipt") {
        rpc.lookups.push(call.params?.[0]);
        out = { jsonrpc: "2.0", id: call.id, result: receipts.get(String(call.params?.[0]).toLowerCase()) ?? null };
      } else {
        out = { jsonrpc: "2.0", id: call.id, error: { code: -32601, message: "method not found" } };
      }
      const text = JSON.stringify(out);
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  rpc.settled = (hash, t) => {
    receipts.set(hash.toLowerCase(), {
      transactionHash: hash,
      status: "0x1",
      logs: [{ address: t.token, topics: [TRANSFER_TOPIC, topic(t.from), topic(t.to)], data: "0x" + BigInt(t.value).toString(16).padStart(64, "0"), removed: false }],
    });
  };
  rpc.url = await listen(server);
  rpc.close = () => close(server);
  return rpc;
}
