/** Members and Token Management: one POST route per operation row, JSON-RPC envelopes in and out. */

import { Type } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { ValueError } from "@sinclair/typebox/errors";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { ChaingateError } from "../errors/chaingate-error.js";
import { invalidParams } from "../errors/rpc-errors.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { requestHash } from "../idempotency/request-identity.js";
import type { Operation } from "../operations/operation.js";
import { errorText, type RequestId, readNativeRequest, resultText, salvageId } from "../rpc/envelope.js";
import { RequestIdSchema, RpcErrorSchema } from "../rpc/envelope-schemas.js";
import { explainValueError } from "../rpc/explain-invalid.js";
import { ownerOf, requireAdmin } from "./access-control.js";
import { JSON_TYPE, useJsonRpcEnvelopes } from "./jsonrpc-context.js";

export interface OperationRoutesOptions {
  operations: readonly Operation[];
  idempotency: IdempotencyStore;
  bodyLimit: number;
  /** Opens the wallet a signed operation names (its password checked), before a stored answer is replayed. */
  checkSigner: (walletId: string, index: number, password: string, owner: string | null) => Promise<unknown>;
}

/** A field path the way a caller wrote it: `mint[2]`, `owner`. */
function fieldName(path: string): string {
  return path
    .split("/")
    .filter((part) => part !== "")
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join("");
}

/**
 * A validation failure in words a newcomer can act on: the field, the form it takes (the schema's
 * description) and an example when the schema has one, e.g. `initial_supply is not valid: minted to the
 * creator (base units, decimal string or integer), e.g. "1000000"; got 12.5`.
 */
function explain(field: string, error: ValueError | undefined): string {
  const name = field === "" ? "params" : field;
  return error === undefined ? `${name} is not valid` : explainValueError(name, error);
}

/** The JSON-RPC answer of one operation, its `result` typed by the operation's own schema. */
function resultEnvelope(operation: Operation) {
  return Type.Object(
    {
      jsonrpc: Type.Literal("2.0"),
      id: RequestIdSchema,
      result: Type.Optional(operation.result),
      error: Type.Optional(RpcErrorSchema),
    },
    { title: `${operation.path} response` },
  );
}

export const operationRoutes: FastifyPluginAsync<OperationRoutesOptions> = async (app, options) => {
  useJsonRpcEnvelopes(app, options.bodyLimit);
  for (const operation of options.operations) operationRoute(app, operation, options);
};

/** The route's schema: the parameters object alone or in an envelope, the typed result envelope. */
function operationSchema(operation: Operation) {
  return {
    tags: [operation.tag],
    summary: operation.summary,
    description:
      `${operation.description ?? ""} Body: the parameters object, or a JSON-RPC envelope whose params[0] is one. ` +
      (operation.signs ? "An `Idempotency-Key` header makes a retry return the first answer." : ""),
    operationId: operation.path,
    ...(operation.signs
      ? { headers: Type.Object({ "idempotency-key": Type.Optional(Type.String({ maxLength: 200 })) }) }
      : {}),
    body: Type.Optional(
      Type.Union([
        operation.params,
        Type.Object({
          id: Type.Optional(RequestIdSchema),
          jsonrpc: Type.Optional(Type.String()),
          method: Type.Optional(Type.String()),
          params: Type.Optional(Type.Array(operation.params, { maxItems: 1 })),
        }),
      ]),
    ),
    response: { 200: resultEnvelope(operation) },
  };
}

/** The parameters object from a bare body or an envelope's params[0], checked; the envelope's id when there was one. */
function readInput(
  operation: Operation,
  body: Record<string, unknown> | undefined,
  check: TypeCheck<Operation["params"]>,
): { id?: RequestId; input: object } {
  const enveloped =
    typeof body === "object" && body !== null && ("params" in body || "jsonrpc" in body || "id" in body);
  let id: RequestId | undefined;
  let input: unknown = enveloped ? undefined : body;
  if (enveloped) {
    const call = readNativeRequest(body, operation.path);
    id = call.id;
    const params = call.params as unknown[];
    if (params.length > 1) throw invalidParams(`${operation.path} takes one parameters object`);
    input = params[0];
  }
  input ??= {};
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalidParams(`${operation.path} takes one parameters object`);
  }
  if (!check.Check(input)) {
    const first = check.Errors(input).First();
    const field = first === undefined ? "" : fieldName(first.path);
    throw invalidParams(explain(field, first), { field: field === "" ? null : field });
  }
  return { ...(id === undefined ? {} : { id }), input };
}

function operationRoute(app: FastifyInstance, operation: Operation, options: OperationRoutesOptions): void {
  const check = TypeCompiler.Compile(operation.params);
  const route = `/${operation.path}`;
  app.post(
    route,
    { schema: operationSchema(operation), config: { rateGroup: operation.signs ? "sign" : "read" } },
    async (request, reply) => {
      reply.type(JSON_TYPE);
      const body = request.body as Record<string, unknown> | undefined;
      let id = salvageId(body, 1);
      try {
        const read = readInput(operation, body, check);
        if (read.id !== undefined) id = read.id;
        const input = read.input;
        if (operation.admin) requireAdmin(request, `${operation.path} needs an admin API key`);
        const context = {
          owner: ownerOf(request),
          idempotencyKey: operation.signs
            ? (request.headers["idempotency-key"] as string | undefined)
            : undefined,
        };
        const result = await options.idempotency.once(
          {
            route,
            owner: context.owner,
            key: context.idempotencyKey,
            hash: () => requestHash(input),
            authorize: async () => {
              const signer = input as { wallet_id?: unknown; password?: unknown; index?: unknown };
              if (typeof signer.wallet_id === "string" && typeof signer.password === "string")
                await options.checkSigner(
                  signer.wallet_id,
                  typeof signer.index === "number" ? signer.index : 0,
                  signer.password,
                  context.owner,
                );
            },
          },
          (idempotencyRef) => operation.run(input, { ...context, idempotencyRef }),
        );
        return resultText(id, result);
      } catch (error) {
        if (!(error instanceof ChaingateError)) request.log.error({ err: error }, "operation failed");
        return errorText(id, error);
      }
    },
  );
}
