// Real x402 seller middleware from the npm registry, on loopback: @x402/express
// (x402 v2, with @x402/core's resource server and the @x402/svm and @x402/evm
// exact schemes) and x402-express (x402 v1). Each configuration is its own
// express app gating /api/paid under one route key, pointed at the test's
// facilitator; behind the gate the app answers 200 JSON on the key's verb
// (GET and POST for a verb-less key).
import http from "node:http";
import express from "express";
import { SOLANA_DEVNET, SOLANA_MAINNET, close, keypair, listen } from "./solana.mjs";

export const V2 = { name: "@x402/express", version: "2.27.0", slug: "x402-express-v2" };
export const V1 = { name: "x402-express", version: "1.2.0", slug: "x402-express-v1" };

const PATH = "/api/paid";
const SOLANA_PAYEE = keypair().address;
const EVM_PAYEE = "0x" + "5eed".repeat(10);

// The networks of a configuration, by its id part: v2 CAIP-2 and v1 name.
const NETWORKS = {
  solana: { v2: SOLANA_MAINNET, v1: "solana", payTo: SOLANA_PAYEE },
  "solana-devnet": { v2: SOLANA_DEVNET, v1: "solana-devnet", payTo: SOLANA_PAYEE },
  base: { v2: "eip155:8453", v1: "base", payTo: EVM_PAYEE },
  "base-sepolia": { v2: "eip155:84532", v1: "base-sepolia", payTo: EVM_PAYEE },
};

// The route keys, by their id part.
const ROUTES = {
  verbless: { key: PATH, handlers: ["GET", "POST"] },
  get: { key: `GET ${PATH}`, handlers: ["GET"] },
  post: { key: `POST ${PATH}`, handlers: ["POST"] },
};

// A configuration: impl, network and route id parts (as in the captured
// corpus case ids captured-<impl>-<network>-<route>-<op>).
export function config(impl, network, route) {
  return { impl, network, route, id: `${impl.slug}-${network}-${route}` };
}

function handlers(app, route) {
  const ok = (req, res) => res.json({ forecast: "sunny" });
  for (const verb of ROUTES[route].handlers) {
    if (verb === "GET") app.get(PATH, ok);
    else app.post(PATH, ok);
  }
}

async function v2App(c, facilitatorUrl) {
  const { paymentMiddleware, x402ResourceServer } = await import("@x402/express");
  const { HTTPFacilitatorClient } = await import("@x402/core/server");
  const { ExactSvmScheme } = await import("@x402/svm/exact/server");
  const { ExactEvmScheme } = await import("@x402/evm/exact/server");
  const n = NETWORKS[c.network];
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
    .register("solana:*", new ExactSvmScheme())
    .register("eip155:*", new ExactEvmScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        [ROUTES[c.route].key]: {
          accepts: { scheme: "exact", network: n.v2, price: "$0.01", payTo: n.payTo },
          description: "A forecast for one city.",
          mimeType: "application/json",
        },
      },
      server,
    ),
  );
  handlers(app, c.route);
  return app;
}

async function v1App(c, facilitatorUrl) {
  const { paymentMiddleware } = await import("x402-express");
  const n = NETWORKS[c.network];
  const app = express();
  app.use(
    paymentMiddleware(
      n.payTo,
      {
        [ROUTES[c.route].key]: {
          price: "$0.01",
          network: n.v1,
          config: { description: "A forecast for one city.", mimeType: "application/json" },
        },
      },
      { url: facilitatorUrl },
    ),
  );
  handlers(app, c.route);
  return app;
}

// start runs configuration c on a free loopback port; resolves to {url, close}.
export async function start(c, facilitatorUrl) {
  const app = c.impl === V2 ? await v2App(c, facilitatorUrl) : await v1App(c, facilitatorUrl);
  const server = http.createServer(app);
  const base = await listen(server);
  return { url: base + PATH, close: () => close(server) };
}

