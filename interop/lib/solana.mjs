// Solana helpers of the interop suite: local keypairs (no funds, no chain),
// associated token accounts, reading a serialized transaction, and a fake
// JSON-RPC node on 127.0.0.1 answering what the x402 clients and payability
// ask for.
import http from "node:http";
import crypto from "node:crypto";
import {
  address,
  createKeyPairSignerFromBytes,
  getAddressEncoder,
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
} from "@solana/kit";

export const USDC_MAINNET = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
export const USDC_DEVNET = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const MEMO_PROGRAMS = ["MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr", "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"];
const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";

const b58 = getBase58Decoder(); // bytes -> text
const b58bytes = getBase58Encoder(); // text -> bytes

export const base58 = (bytes) => b58.decode(bytes);

// A fresh local Ed25519 keypair: {address, secret (64 bytes, base58), signer()}.
export function keypair() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync("ed25519");
  const d = Buffer.from(privateKey.export({ format: "jwk" }).d, "base64url");
  const x = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url");
  const secret = new Uint8Array(Buffer.concat([d, x]));
  return {
    address: base58(x),
    secret: base58(secret),
    signer: () => createKeyPairSignerFromBytes(secret),
  };
}

// The associated token account of owner for mint under tokenProgram.
export async function associatedTokenAccount(owner, mint, tokenProgram = TOKEN_PROGRAM) {
  const enc = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: address(ATA_PROGRAM),
    seeds: [enc.encode(address(owner)), enc.encode(address(tokenProgram)), enc.encode(address(mint))],
  });
  return pda.toString();
}

// Reads a base64 wire transaction: its message bytes, signatures (by
// signer address), static accounts and instructions.
export function readTransaction(base64) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const accounts = message.staticAccounts.map(String);
  const instructions = (message.instructions ?? []).map((ix) => ({
    program: accounts[ix.programAddressIndex],
    accounts: (ix.accountIndices ?? []).map((i) => accounts[i]),
    data: ix.data ? Uint8Array.from(ix.data) : new Uint8Array(),
  }));
  return { messageBytes: Uint8Array.from(tx.messageBytes), signatures: tx.signatures, accounts, instructions, header: message.header };
}

// Verifies an Ed25519 signature of signer (base58 address) over message.
export function signedBy(signer, message, signature) {
  if (!signature) return false;
  const der = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(b58bytes.encode(signer))]);
  const key = crypto.createPublicKey({ key: der, format: "der", type: "spki" });
  return crypto.verify(null, Buffer.from(message), key, Buffer.from(signature));
}

// An SPL Mint account (82 bytes): no authorities, decimals, initialized.
function mintAccount(decimals) {
  const data = Buffer.alloc(82);
  data.writeUInt8(decimals, 44);
  data.writeUInt8(1, 45);
  return data.toString("base64");
}

// Starts a fake Solana JSON-RPC node on 127.0.0.1. It answers:
//   getAccountInfo     the USDC mints (6 decimals, classic Token program)
//   getLatestBlockhash a fresh random blockhash
//   simulateTransaction success, 6,000 compute units (x402-fetch estimates its limit)
//   getTransaction     a jsonParsed-shaped answer (fee 5,000 lamports) for a
//                      signature passed to settled(), showing the transfer
//                      it was given (the destination token account credited
//                      the amount), null for any other
// and records every method; anything else is a JSON-RPC error.
export function startRpc() {
  const settled = new Map();
  const methods = [];
  const lookups = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      let call;
      try {
        call = JSON.parse(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      methods.push(call.method);
      const reply = (result) => ({ jsonrpc: "2.0", id: call.id, result });
      const context = { slot: 1000, apiVersion: "2.2.0" };
      let out;
      switch (call.method) {
        case "getAccountInfo": {
          const key = call.params?.[0];
          const mint = key === USDC_MAINNET || key === USDC_DEVNET;
          out = reply({
            context,
            value: mint
              ? { data: [mintAccount(6), "base64"], executable: false, lamports: 1461600, owner: TOKEN_PROGRAM, rentEpoch: 0, space: 82 }
              : null,
          });
          break;
        }
        case "getLatestBlockhash":
          out = reply({ context, value: { blockhash: base58(crypto.randomBytes(32)), lastValidBlockHeight: 2000 } });
          break;
        case "simulateTransaction":
          out = reply({ context, value: { err: null, logs: [], accounts: null, unitsConsumed: 6000, returnData: null } });
          break;
        case "getTransaction": {
          const sig = call.params?.[0];
          lookups.push(sig);
          out = reply(settled.has(sig) ? settledTransaction(sig, settled.get(sig)) : null);
          break;
        }
        default:
          out = { jsonrpc: "2.0", id: call.id, error: { code: -32601, message: "Method not found" } };
      }
      const text = JSON.stringify(out);
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  return listen(server).then((url) => ({
    url,
    methods,
    lookups,
    settled: (sig, transfer) => settled.set(sig, transfer),
    close: () => close(server),
  }));
}

// settledTransaction is the jsonParsed getTransaction result of a settled
// transfer: the fee payer and the buyer sign; the buyer's token account
// (source) pays amount of mint into destination.
function settledTransaction(sig, t) {
  const keys = [
    { pubkey: t.feePayer, signer: true, writable: true },
    { pubkey: t.authority, signer: true, writable: false },
    { pubkey: t.source, signer: false, writable: true },
    { pubkey: t.destination, signer: false, writable: true },
    { pubkey: t.mint, signer: false, writable: false },
    { pubkey: t.program, signer: false, writable: false },
  ];
  const balance = (accountIndex, owner, amount) => ({
    accountIndex,
    mint: t.mint,
    owner,
    programId: t.program,
    uiTokenAmount: { amount: String(amount), decimals: 6 },
  });
  const start = 1_000_000_000n;
  return {
    slot: 1000,
    blockTime: Math.floor(Date.now() / 1000),
    meta: {
      err: null,
      fee: 5000,
      preTokenBalances: [balance(2, t.authority, start)],
      postTokenBalances: [balance(2, t.authority, start - t.amount), balance(3, "", t.amount)],
    },
    transaction: {
      signatures: [sig],
      message: {
        accountKeys: keys,
        instructions: [
          {
            programId: t.program,
            parsed: {
              type: "transferChecked",
              info: { source: t.source, mint: t.mint, destination: t.destination, authority: t.authority, tokenAmount: { amount: String(t.amount), decimals: 6 } },
            },
          },
        ],
      },
    },
  };
}

// listen starts server on 127.0.0.1 on a free port and resolves to its URL.
export function listen(server) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
}

export function close(server) {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}
