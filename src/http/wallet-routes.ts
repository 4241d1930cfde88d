/** The Wallets group: GET /wallet, POST /wallet, GET /wallet/{id}?index=. */
import type { Static } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import {
  createWalletBodySchema,
  ProblemSchema,
  WalletParamsSchema,
  WalletQuerySchema,
  WalletRecordSchema,
} from "../wallets/wallet-schemas.js";
import type { WalletService } from "../wallets/wallet-service.js";
import { ownerOf, requireAdmin } from "./access-control.js";
import { useRestBodies } from "./rest-body.js";
import { useStrictValidation } from "./strict-validation.js";

export interface WalletRoutesOptions {
  wallets: WalletService;
  maxAddresses: number;
}

const problems = { 400: ProblemSchema, 404: ProblemSchema, 413: ProblemSchema, 500: ProblemSchema };

const Records = Type.Array(
  Type.Intersect([
    WalletRecordSchema,
    Type.Object({
      owner: Type.Optional(
        Type.Union([Type.String(), Type.Null()], {
          description:
            "admin listing only: the API key that owns the wallet (null: made before keys existed)",
        }),
      ),
    }),
  ]),
);
const AssignBody = Type.Object(
  {
    key_id: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "the API key's id (chaingate keys list)",
    }),
  },
  { additionalProperties: false },
);

export const walletRoutes: FastifyPluginAsync<WalletRoutesOptions> = async (
  app,
  { wallets, maxAddresses },
) => {
  useStrictValidation(app);
  useRestBodies(app);
  ownershipRoutes(app, wallets);
  recordRoutes(app, wallets, maxAddresses);
};

/** Listing every wallet (an admin sees each one's owner) and giving a wallet to a key. */
function ownershipRoutes(app: FastifyInstance, wallets: WalletService): void {
  app.get(
    "/wallet",
    {
      schema: {
        tags: ["Wallets"],
        summary: "Lists every address record of every wallet",
        operationId: "listWallets",
        response: { 200: Records, 500: ProblemSchema },
      },
    },
    // An admin key sees every wallet with its owner, those made before keys existed (owner null)
    // included; any other key its own.
    async (request) =>
      request.tenant?.role === "admin" ? wallets.listAll() : wallets.list(ownerOf(request)),
  );

  app.post<{ Params: Static<typeof WalletParamsSchema>; Body: Static<typeof AssignBody> }>(
    "/wallet/:id/owner",
    {
      schema: {
        tags: ["Wallets"],
        summary:
          "Gives a wallet to an API key (admin): a wallet made before keys existed becomes that key's to list and sign with",
        operationId: "assignWallet",
        params: WalletParamsSchema,
        body: AssignBody,
        response: {
          200: Type.Object({ id: Type.String(), owner: Type.String() }),
          ...problems,
          401: ProblemSchema,
          403: ProblemSchema,
        },
      },
    },
    async (request) => {
      requireAdmin(request, "only an admin key may give a wallet to a key");
      await wallets.assign(request.params.id, request.body.key_id);
      return { id: request.params.id, owner: request.body.key_id };
    },
  );
}

/** Creating (or importing) a wallet, and reading one. */
function recordRoutes(app: FastifyInstance, wallets: WalletService, maxAddresses: number): void {
  const CreateBody = createWalletBodySchema(maxAddresses);
  app.post<{ Body: Static<typeof CreateBody> }>(
    "/wallet",
    {
      schema: {
        tags: ["Wallets"],
        summary: "Creates (or imports) a keystore v3 wallet with address_quantity addresses",
        operationId: "createWallet",
        body: CreateBody,
        response: { 200: Records, ...problems },
      },
      config: { rateGroup: "wallet_create" },
    },
    async (request) =>
      wallets.create(
        {
          type: request.body.type,
          password: request.body.password,
          addressQuantity: request.body.address_quantity,
          mnemonic: request.body.mnemonic,
          keystore: request.body.keystore,
          keys: request.body.keys,
        },
        ownerOf(request),
      ),
  );

  app.get<{ Params: Static<typeof WalletParamsSchema>; Querystring: Static<typeof WalletQuerySchema> }>(
    "/wallet/:id",
    {
      schema: {
        tags: ["Wallets"],
        summary: "The records of one wallet, or with ?index= the one record at that index",
        operationId: "getWallet",
        params: WalletParamsSchema,
        querystring: WalletQuerySchema,
        response: { 200: Records, ...problems },
      },
    },
    async (request) => wallets.get(request.params.id, request.query.index, ownerOf(request)),
  );
}
