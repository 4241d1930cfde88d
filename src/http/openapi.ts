/** OpenAPI 3.1 document generated from the route schemas, served as /openapi.json and rendered at /docs. */

import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { withGuardRefusals } from "./openapi-refusals.js";

interface BodySchema {
  required?: string[];
  anyOf?: BodySchema[];
}

interface OpenApiPaths {
  paths?: Record<
    string,
    Record<
      string,
      { requestBody?: { required?: boolean; content?: Record<string, { schema?: BodySchema }> } }
    >
  >;
}

/**
 * @fastify/swagger marks every request body required; an envelope route whose body has no required
 * member (the no-parameter methods, the list operations) is served without a body, so says so.
 * The REST routes (wallets, /transaction) keep their bodies required.
 */
function withOptionalBodies<T extends OpenApiPaths>(document: T): T {
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    if (path.startsWith("/wallet") || path === "/transaction") continue;
    for (const operation of Object.values(methods)) {
      const body = operation.requestBody;
      const schema = body?.content?.["application/json"]?.schema;
      // Operation bodies are "the parameters object, or an envelope": the parameters decide.
      const parameters = schema?.anyOf?.[0] ?? schema;
      if (body !== undefined && parameters !== undefined && (parameters.required ?? []).length === 0) {
        body.required = false;
      }
    }
  }
  return document;
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    transform: withGuardRefusals,
    transformObject: (document) =>
      "openapiObject" in document
        ? (withOptionalBodies(document.openapiObject as OpenApiPaths) as typeof document.openapiObject)
        : document.swaggerObject,
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "chaingate",
        version: "0.1.0",
        description:
          "EVM node gateway and keystore v3 custody service. Native paths answer JSON-RPC 2.0 envelopes with " +
          "HTTP 200; `result` carries the node's own JSON value. Errors on Native paths are JSON-RPC error " +
          "objects; errors on Wallets and /transaction are RFC 9457 problem bodies with a stable `code`.",
        license: { name: "MIT", identifier: "MIT" },
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
        {
          name: "Policies",
          description: "Signing policies (admin) and the audit log of every signing decision",
        },
        { name: "Transports", description: "Limits on what crosses between chains (per lane)" },
        { name: "Webhooks", description: "Signed, durable notifications of every state change" },
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
