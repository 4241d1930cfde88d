/** POST /transaction (problem errors); list_all_transfers is a row of the operation table. */
import type { Static } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import { CreateTransactionBody, TransactionResult } from "../tx/transaction-schemas.js";
import type { TransactionService } from "../tx/transaction-service.js";
import { ProblemSchema } from "../wallets/wallet-schemas.js";
import { ownerOf } from "./access-control.js";
import { bodyStream } from "./read-ahead.js";
import { useRestBodies } from "./rest-body.js";
import { useStrictValidation } from "./strict-validation.js";

export interface TransactionRoutesOptions {
  transactions: TransactionService;
}

export const transactionRoutes: FastifyPluginAsync<TransactionRoutesOptions> = async (app, options) => {
  await app.register(async (rest) => {
    useStrictValidation(rest);
    useRestBodies(rest);
    rest.post<{ Body: Static<typeof CreateTransactionBody> }>(
      "/transaction",
      {
        // A body the fast path read before handing the request on (one it does not take, or a refusal).
        preParsing: (request, _reply, payload, done) => done(null, bodyStream(request.raw, payload)),
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
            504: ProblemSchema,
          },
        },
        config: { rateGroup: "sign" },
      },
      async (request) => {
        const key = request.headers["idempotency-key"];
        // A failure kept under the Idempotency-Key is thrown as first answered: the error handler
        // answers it as a problem body.
        return options.transactions.send(request.body, {
          idempotencyKey: typeof key === "string" ? key : undefined,
          chainHeader: request.headers["x-chain-id"],
          owner: ownerOf(request),
        });
      },
    );
  });
};
