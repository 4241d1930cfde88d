/** OpenAPI 3.1 document generated from the route schemas, served as /openapi.json and rendered at /docs. */

import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { withGuardRefusals } from "./openapi-refusals.js";

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    transform: withGuardRefusals,
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "chaingate",
        version: "0.1.0",
        description:
          "EVM node gateway and keystore v3 custody service. Native paths answer JSON-RPC 2.0 envelopes with " +
          "HTTP 200; `result` carries the node's own JSON value. Errors on Native paths are JSON-RPC error " +
          "objects; errors on Wallets and /transaction are RFC 9457 problem bodies with a stable `code`.",
        license: { name: "UNLICENSED", identifier: "UNLICENSED" },
      },
      servers: [{ url: "/", description: "this chaingate" }],
      components: {
        securitySchemes: {
          apiKey: {
            type: "http",
            scheme: "bearer",
            description:
              "An API key (`chaingate keys create`). Needed once any key exists; without keys chaingate serves loopback callers only.",
          },
        },
      },
      // Optional: a keyless chaingate answers without it.
      security: [{}, { apiKey: [] }],
      tags: [
        { name: "Native", description: "The spec's node methods, one path each" },
        { name: "Native (client methods)", description: "Further node methods client libraries need" },
        { name: "JSON-RPC", description: "Standard JSON-RPC 2.0 endpoint" },
        { name: "Wallets", description: "Keystore v3 custody wallets; errors are problem bodies" },
        { name: "Transactions", description: "Signed transactions from custody wallets, sent and tracked" },
        { name: "Members", description: "The member registry: who may receive transports on which chain" },
        {
          name: "Token Management",
          description: "ERC20/ERC721 tokens, transfers and cross-chain transports",
        },
        { name: "Operations", description: "Health and documentation" },
      ],
    },
  });
  const consoleFile = (name: string) => readFileSync(new URL(`../../console/${name}`, import.meta.url));
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    // chaingate's own name, icon and colours, so the page is not mistaken for a Swagger demo.
    logo: { type: "image/svg+xml", content: consoleFile("logo.svg"), href: "/console/", target: "_self" },
    theme: {
      title: "chaingate API",
      favicon: [
        {
          filename: "favicon.svg",
          rel: "icon",
          sizes: "any",
          type: "image/svg+xml",
          content: consoleFile("favicon.svg"),
        },
      ],
      css: [{ filename: "chaingate.css", content: ".swagger-ui .topbar { background-color: #1b3a5c; }" }],
    },
    uiConfig: { docExpansion: "none", deepLinking: true },
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
