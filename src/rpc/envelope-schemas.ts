/** JSON Schemas of the JSON-RPC envelopes, built from the method table for the OpenAPI document. */
import { type TSchema, Type } from "@sinclair/typebox";
import type { MethodSpec } from "./method-spec.js";

export const RequestIdSchema = Type.Union([Type.Integer(), Type.String(), Type.Null()], {
  description: "Caller-chosen id, echoed in the answer (1 when absent on Native paths)",
});

export const RpcErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: "JSON-RPC error code; node codes are passed through unchanged" }),
    message: Type.String(),
    data: Type.Optional(
      Type.Unknown({ description: "node error data (e.g. revert data), or chaingate's {code, retryable}" }),
    ),
  },
  { title: "JSON-RPC error" },
);

export const ResponseEnvelopeSchema = Type.Object(
  {
    jsonrpc: Type.Literal("2.0"),
    id: RequestIdSchema,
    result: Type.Optional(
      Type.Unknown({
        description: "the node's own JSON value (objects stay objects, quantities are hex strings)",
      }),
    ),
    error: Type.Optional(RpcErrorSchema),
  },
  { title: "JSON-RPC response" },
);

/** The positional params of one method as JSON Schema 2020-12 (`prefixItems`). */
export function paramsSchema(spec: MethodSpec): TSchema {
  const required = spec.params.filter((p) => p.required).length;
  return Type.Unsafe({
    type: "array",
    prefixItems: spec.params.map((p) => ({ ...p.schema, title: p.name })),
    minItems: required,
    maxItems: spec.params.length,
    description: `positional parameters: [${spec.params.map((p) => (p.required ? p.name : `${p.name}?`)).join(", ")}]`,
  });
}

export function nativeBodySchema(spec: MethodSpec): TSchema {
  return Type.Object(
    {
      id: Type.Optional(RequestIdSchema),
      jsonrpc: Type.Optional(Type.Literal("2.0")),
      method: Type.Optional(Type.String({ description: "ignored: the path names the method" })),
      params:
        spec.params.length === 0
          ? Type.Optional(Type.Array(Type.Unknown(), { maxItems: 0 }))
          : paramsSchema(spec),
    },
    { title: `${spec.name} request` },
  );
}

export const JsonRpcRequestSchema = Type.Object(
  {
    jsonrpc: Type.Literal("2.0"),
    id: Type.Optional(RequestIdSchema),
    method: Type.String(),
    params: Type.Optional(Type.Array(Type.Unknown())),
  },
  { title: "JSON-RPC request" },
);

export const ChainQuerySchema = Type.Object({
  chain_id: Type.Optional(
    Type.String({ description: "chain id (decimal or 0x hex); the home chain when absent" }),
  ),
});

/** A Native path of a node read: the chain, and how many upstreams must answer alike. */
export const ReadQuerySchema = Type.Object({
  ...ChainQuerySchema.properties,
  consensus: Type.Optional(
    Type.String({
      description:
        "how many upstreams must answer alike (1 to 16); a disagreement answers UPSTREAMS_DISAGREE, or the chain's `onDisagreement` policy",
    }),
  ),
});
