// Seller configurations recorded by record.mjs, and the express apps that serve them.
//
// Each configuration is one small express app on its own fixed loopback port,
// gated by the real seller middleware (used as a dependency, unmodified):
//   v2: @x402/express paymentMiddleware + x402ResourceServer (@x402/core),
//       ExactSvmScheme (@x402/svm) / ExactEvmScheme (@x402/evm)
//   v1: x402-express paymentMiddleware
// Both are pointed at the fake facilitator on 127.0.0.1; no scheme is given an RPC URL.
import express from "express";
import {
  SOLANA_MAINNET,
  SOLANA_DEVNET,
  BASE_MAINNET,
  BASE_SEPOLIA,
  fakeSolanaAddress,
  fakeEvmAddress,
} from "./fake-facilitator.mjs";

export const V2 = { name: "@x402/express", version: "2.27.0", slug: "x402-express-v2", file: "x402-express-v2.json" };
export const V1 = { name: "x402-express", version: "1.2.0", slug: "x402-express-v1", file: "x402-express-v1.json" };

export const PAY_TO_SOLANA = fakeSolanaAddress("seller-payee-solana");
export const PAY_TO_EVM = fakeEvmAddress("seller-payee-evm");

const PATH = "/api/paid";

const SHORT_DESCRIPTION = "Current weather for one city, as JSON.";

// Longer than 500 characters (the criteria's description_overlong threshold).
export const LONG_DESCRIPTION = [
  "Hourly weather forecast for a single city, returned as a JSON document.",
  "Each call covers the next forty-eight hours and includes air temperature, apparent temperature,",
  "relative humidity, dew point, wind speed and direction at ten metres, gusts, precipitation amount",
  "and probability, snowfall, cloud cover at three levels, visibility, UV index and sunrise and sunset",
  "times in the city's local time zone. Values come from a blend of global and regional models and are",
  "refreshed every hour; stale entries are never served. Pass the city as a query parameter or in the",
  "request body. One payment buys one forecast; retries within the payment window are not charged twice.",
].join(" ");

const PORT_V2 = 48410;
const PORT_V1 = 48430;

// A configuration: which implementation, which network and route key, price, description,
// mimeType, an optional explicit resource URL, and an optional query on the called URL.
// `route` and `network` name the case ids: captured-<impl>-<network>-<route>-<op>.
export const CONFIGS = [
  // ---- x402 v2: @x402/express@2.27.0 ----
  { impl: V2, network: "solana", route: "verbless", routeKey: PATH,
    accepts: [{ scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: PAY_TO_SOLANA }],
    description: SHORT_DESCRIPTION, mimeType: "application/json" },
  { impl: V2, network: "solana-devnet", route: "get", routeKey: `GET ${PATH}`,
    accepts: [{ scheme: "exact", network: SOLANA_DEVNET, price: "$0.25", payTo: PAY_TO_SOLANA }],
    description: LONG_DESCRIPTION, mimeType: "application/json" },
  { impl: V2, network: "solana", route: "post", routeKey: `POST ${PATH}`,
    accepts: [{ scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: PAY_TO_SOLANA }],
    description: SHORT_DESCRIPTION, mimeType: "application/json" },
  { impl: V2, network: "solana", route: "verbless-resource-override", routeKey: PATH,
    accepts: [{ scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: PAY_TO_SOLANA }],
    description: SHORT_DESCRIPTION, mimeType: "application/json",
    resource: "https://api.seller.example/api/paid" },
  { impl: V2, network: "solana", route: "get-query", routeKey: `GET ${PATH}`,
    accepts: [{ scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: PAY_TO_SOLANA }],
    description: SHORT_DESCRIPTION, mimeType: "application/json", query: "?city=lisbon" },
  { impl: V2, network: "solana", route: "get-app-also-post", routeKey: `GET ${PATH}`,
    accepts: [{ scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: PAY_TO_SOLANA }],
    description: SHORT_DESCRIPTION, mimeType: "application/json", handlers: ["GET", "POST"] },
  { impl: V2, network: "base", route: "verbless", routeKey: PATH,
    accepts: [{ scheme: "exact", network: BASE_MAINNET, price: "$0.01", payTo: PAY_TO_EVM }],
    description: SHORT_DESCRIPTION, mimeType: "application/json" },
  { impl: V2, network: "base-sepolia", route: "get", routeKey: `GET ${PATH}`,
    accepts: [{ scheme: "exact", network: BASE_SEPOLIA, price: "$0.25", payTo: PAY_TO_EVM }],
    description: LONG_DESCRIPTION, mimeType: "application/json" },
  { impl: V2, network: "base", route: "post", routeKey: `POST ${PATH}`,
    accepts: [{ scheme: "exact", network: BASE_MAINNET, price: "$0.01", payTo: PAY_TO_EVM }],
    description: "", mimeType: "" },
  { impl: V2, network: "solana-and-base", route: "verbless", routeKey: PATH,
    accepts: [
      { scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: PAY_TO_SOLANA },
      { scheme: "exact", network: BASE_MAINNET, price: "$0.01", payTo: PAY_TO_EVM },
    ],
    description: SHORT_DESCRIPTION, mimeType: "application/json" },

  // ---- x402 v1: x402-express@1.2.0 ----
  { impl: V1, network: "solana", route: "verbless", routeKey: PATH,
    v1: { network: "solana", price: "$0.01" }, payTo: PAY_TO_SOLANA,
    description: SHORT_DESCRIPTION, mimeType: "application/json" },
  { impl: V1, network: "solana-devnet", route: "get", routeKey: `GET ${PATH}`,
    v1: { network: "solana-devnet", price: "$0.25" }, payTo: PAY_TO_SOLANA,
    description: LONG_DESCRIPTION, mimeType: "application/json" },
  { impl: V1, network: "solana", route: "post", routeKey: `POST ${PATH}`,
    v1: { network: "solana", price: "$0.01" }, payTo: PAY_TO_SOLANA,
    description: SHORT_DESCRIPTION, mimeType: "application/json" },
  { impl: V1, network: "solana", route: "verbless-resource-override", routeKey: PATH,
    v1: { network: "solana", price: "$0.01" }, payTo: PAY_TO_SOLANA,
    description: SHORT_DESCRIPTION, mimeType: "application/json",
    resource: "https://api.seller.example/api/paid" },
  { impl: V1, network: "solana", route: "get-query", routeKey: `GET ${PATH}`,
    v1: { network: "solana", price: "$0.01" }, payTo: PAY_TO_SOLANA,
    description: SHORT_DESCRIPTION, mimeType: "application/json", query: "?city=lisbon" },
  { impl: V1, network: "solana", route: "get-app-also-post", routeKey: `GET ${PATH}`,
    v1: { network: "solana", price: "$0.01" }, payTo: PAY_TO_SOLANA,
    description: SHORT_DESCRIPTION, mimeType: "application/json", handlers: ["GET", "POST"] },
  { impl: V1, network: "base", route: "verbless", routeKey: PATH,
    v1: { network: "base", price: "$0.01" }, payTo: PAY_TO_EVM,
    description: SHORT_DESCRIPTION, mimeType: "application/json" },
  { impl: V1, network: "base-sepolia", route: "get", routeKey: `GET ${PATH}`,
    v1: { network: "base-sepolia", price: "$0.25" }, payTo: PAY_TO_EVM,
    description: LONG_DESCRIPTION, mimeType: "application/json" },
  { impl: V1, network: "base", route: "post", routeKey: `POST ${PATH}`,
    v1: { network: "base", price: "$0.01" }, payTo: PAY_TO_EVM,
    description: "", mimeType: "" },
];

// Assign fixed ports in declaration order, per implementation, and the methods the app
// itself answers (behind the middleware): by default the route key's verb, GET and POST
// for a verb-less key. Express answers HEAD with its GET handler.
{
  let v2 = PORT_V2;
  let v1 = PORT_V1;
  for (const c of CONFIGS) {
    c.port = c.impl === V2 ? v2++ : v1++;
    if (!c.handlers) {
      const verb = c.routeKey.includes(" ") ? c.routeKey.split(" ")[0] : null;
      c.handlers = verb ? [verb] : ["GET", "POST"];
    }
  }
}

export function configUrl(c) {
  return `http://127.0.0.1:${c.port}${PATH}${c.query ?? ""}`;
}

function describeNetworks(c) {
  if (c.impl === V1) return `network "${c.v1.network}", price "${c.v1.price}"`;
  return c.accepts.map((a) => `exact on ${a.network} at "${a.price}"`).join(" + ");
}

// One line describing the seller configuration (the case note).
export function configNote(c) {
  const desc = c.description === "" ? "no description" : `${[...c.description].length}-char description`;
  const res = c.resource ? `resource set to ${c.resource}` : "resource derived from the request";
  const query = c.query ? `; called with query ${c.query}` : "";
  return `${c.impl.name}@${c.impl.version} on loopback, route key "${c.routeKey}", ${describeNetworks(c)}, ${desc}, mimeType "${c.mimeType}", ${res}${query}; behind the middleware the app answers ${handlersText(c)} ${PATH} with 200 JSON (other methods: express 404); fake loopback facilitator (verify: isValid false)`;
}

function handlersText(c) {
  return c.handlers.map((m) => (m === "GET" ? "GET (and so HEAD)" : m)).join(" and ");
}

function appHandlers(app, c) {
  const handler = (req, res) => {
    res.json({ forecast: "sunny", city: "lisbon" });
  };
  for (const m of c.handlers) {
    if (m === "GET") app.get(PATH, handler);
    else if (m === "POST") app.post(PATH, handler);
    else throw new Error(`unexpected handler method ${m}`);
  }
}

async function buildV2App(c, facilitatorUrl) {
  const { paymentMiddleware, x402ResourceServer } = await import("@x402/express");
  const { HTTPFacilitatorClient } = await import("@x402/core/server");
  const { ExactSvmScheme } = await import("@x402/svm/exact/server");
  const { ExactEvmScheme } = await import("@x402/evm/exact/server");

  const facilitator = new HTTPFacilitatorClient({ url: facilitatorUrl, timeoutMs: 2000 });
  const server = new x402ResourceServer(facilitator)
    .register("solana:*", new ExactSvmScheme())
    .register("eip155:*", new ExactEvmScheme());
  const routeConfig = {
    accepts: c.accepts.length === 1 ? c.accepts[0] : c.accepts,
    description: c.description,
    mimeType: c.mimeType,
  };
  if (c.resource) routeConfig.resource = c.resource;

  const app = express();
  app.use(express.json());
  app.use(paymentMiddleware({ [c.routeKey]: routeConfig }, server));
  appHandlers(app, c);
  return app;
}

async function buildV1App(c, facilitatorUrl) {
  const { paymentMiddleware } = await import("x402-express");
  const config = { description: c.description, mimeType: c.mimeType };
  if (c.resource) config.resource = c.resource;

  const app = express();
  app.use(express.json());
  app.use(
    paymentMiddleware(
      c.payTo,
      { [c.routeKey]: { price: c.v1.price, network: c.v1.network, config } },
      { url: facilitatorUrl },
    ),
  );
  appHandlers(app, c);
  return app;
}

// Starts the seller app for configuration c on 127.0.0.1:c.port. Resolves to {close}.
export async function startSeller(c, facilitatorUrl) {
  const app = c.impl === V2 ? await buildV2App(c, facilitatorUrl) : await buildV1App(c, facilitatorUrl);
  return new Promise((resolve, reject) => {
    const server = app.listen(c.port, "127.0.0.1");
    server.once("error", reject);
    server.once("listening", () => {
      resolve({
        close: () =>
          new Promise((r) => {
            server.closeAllConnections?.();
            server.close(r);
          }),
      });
    });
  });
}
