/** The Transactions group: POST /transaction (problem errors) and POST /list_all_transfers (JSON-RPC envelope). */
import type { Static } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { FastifyPluginAsync } from "fastify";
import { errorText, readNativeRequest, resultText, salvageId } from "../rpc/envelope.js";
import { RequestIdSchema, ResponseEnvelopeSchema } from "../rpc/envelope-schemas.js";
import { invalidParams } from "../rpc/rpc-errors.js";
import type { Store } from "../store/database.js";
import { listTransfers, type TransferFilter } from "../tx/list-transfers.js";
import { CreateTransactionBody, TransactionResult, TransferFilterSchema } from "../tx/transaction-schemas.js";
import type { TransactionService } from "../tx/transaction-service.js";
import { ProblemSchema } from "../wallets/wallet-schemas.js";
import { JSON_TYPE, useJsonRpcEnvelopes } from "./jsonrpc-context.js";
import { useStrictValidation } from "./strict-validation.js";

export interface TransactionRoutesOptions {
  transactions: TransactionService;
  store: Store;
  bodyLimit: number;
}

export const transactionRoutes: FastifyPluginAsync<TransactionRoutesOptions> = async (app, options) => {
  await app.register(async (rest) => {
    useStrictValidation(rest);
    rest.post<{ Body: Static<typeof CreateTransactionBody> }>(
      "/transaction",
      {
        schema: {
          tags: ["Transactions"],
          summary: "Signs a transaction with a custody wallet's key, sends it, and answers its hash",
          description:
            "Optional `Idempotency-Key` header: the same key and body return the first answer without a second " +
            "transaction; a different body with the same key is 409.",
          operationId: "createTransaction",
          headers: Type.Object({
            "idempotency-key": Type.Optional(Type.String({ description: "makes retries safe" })),
            "x-chain-id": Type.Optional(Type.String()),
          }),
          body: CreateTransactionBody,
          response: {
            200: TransactionResult,
            400: ProblemSchema,
            401: ProblemSchema,
            404: ProblemSchema,
            409: ProblemSchema,
            422: ProblemSchema,
            429: ProblemSchema,
            503: ProblemSchema,
          },
        },
      },
      async (request, reply) => {
        const key = request.headers["idempotency-key"];
        const result = await options.transactions.send(request.body, {
          idempotencyKey: typeof key === "string" ? key : undefined,
          chainHeader: request.headers["x-chain-id"],
        });
        if (result.status !== 200) {
          reply.code(result.status).type("application/problem+json");
          const stored = (result.body as { error: { code: string; message: string; data?: unknown } }).error;
          return {
            type: `urn:chaingate:error:${stored.code.toLowerCase().replaceAll("_", "-")}`,
            title: "Replayed",
            status: result.status,
            detail: stored.message,
            code: stored.code,
            retryable: true,
            ...(stored.data === undefined ? {} : { errors: stored.data }),
          };
        }
        return result.body;
      },
    );
  });

  await app.register(async (rpc) => {
    useJsonRpcEnvelopes(rpc, options.bodyLimit);
    const checkFilter = TypeCompiler.Compile(TransferFilterSchema);
    rpc.post(
      "/list_all_transfers",
      {
        schema: {
          tags: ["Transactions"],
          summary: "Lists the signed transactions chaingate made, newest first (filters and paging optional)",
          description:
            "Body optional: a filter object, or an envelope whose params[0] is one. `result` is " +
            "`{transfers: [...], next_cursor}`; pass next_cursor back as `cursor` for the next page.",
          operationId: "listAllTransfers",
          body: Type.Optional(
            Type.Union([
              TransferFilterSchema,
              Type.Object({
                id: Type.Optional(RequestIdSchema),
                jsonrpc: Type.Optional(Type.String()),
                params: Type.Optional(Type.Array(TransferFilterSchema, { maxItems: 1 })),
              }),
            ]),
          ),
          response: { 200: ResponseEnvelopeSchema },
        },
      },
      async (request, reply) => {
        reply.type(JSON_TYPE);
        const body = request.body as Record<string, unknown> | undefined;
        const enveloped =
          body !== undefined && body !== null && ("params" in body || "jsonrpc" in body || "id" in body);
        let id = salvageId(body, 1);
        try {
          let filter: unknown = enveloped ? undefined : body;
          if (enveloped) {
            const call = readNativeRequest(body, "list_all_transfers");
            id = call.id;
            filter = (call.params as unknown[])[0];
          }
          filter ??= {};
          if (!checkFilter.Check(filter)) {
            const first = checkFilter.Errors(filter).First();
            throw invalidParams(
              `filter${first?.path.replaceAll("/", ".") ?? ""}: ${first?.message ?? "is not valid"}`,
            );
          }
          return resultText(id, await listTransfers(options.store, filter as TransferFilter));
        } catch (error) {
          return errorText(id, error);
        }
      },
    );
  });
};
