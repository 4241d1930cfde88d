/** REST for custody signing: the caller's accounts, unlock and lock by wallet, and unattended wallets. */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import type { CustodyAccounts } from "../custody/custody-accounts.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { ProblemSchema, WalletParamsSchema } from "../wallets/wallet-schemas.js";
import { ownerOf, requireAdmin } from "./access-control.js";
import { useRestBodies } from "./rest-body.js";
import { useStrictValidation } from "./strict-validation.js";

export interface CustodyRoutesOptions {
  custody: CustodyAccounts;
}

const AccountStatusSchema = Type.Object(
  {
    address: Type.String(),
    wallet_id: Type.String(),
    index: Type.Integer(),
    unlocked_until: Type.Union([Type.Integer(), Type.Null()], { description: "epoch milliseconds" }),
    unattended: Type.Boolean(),
  },
  { title: "account" },
);

const UnlockBody = Type.Object(
  {
    password: Type.String({ minLength: 1 }),
    index: Type.Optional(Type.Integer({ minimum: 0, description: "one address; absent: every address" })),
    seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "0 or absent: the default; longer than the ceiling is shortened",
      }),
    ),
  },
  { additionalProperties: false },
);
const LockBody = Type.Union([
  Type.Object(
    { index: Type.Optional(Type.Integer({ minimum: 0, description: "one address; absent: every address" })) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
const UnattendedBody = Type.Object(
  { password: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);
const Unlocked = Type.Array(
  Type.Object({
    address: Type.String(),
    index: Type.Integer(),
    unlocked_until: Type.Union([Type.Integer(), Type.Null()]),
    unlocked_on: Type.Optional(
      Type.Union([Type.Literal("every_instance"), Type.Literal("this_instance")], {
        description:
          "where the unlock lets chaingate sign: every instance sharing the store, or (several instances, no server key) only the one that answered; the others answer UNLOCKED_ELSEWHERE",
      }),
    ),
  }),
);
const problems = {
  400: ProblemSchema,
  401: ProblemSchema,
  403: ProblemSchema,
  404: ProblemSchema,
  409: ProblemSchema,
  429: ProblemSchema,
};

export const custodyRoutes: FastifyPluginAsync<CustodyRoutesOptions> = async (app, { custody }) => {
  useStrictValidation(app);
  useRestBodies(app);
  accountRoutes(app, custody);
  unlockRoutes(app, custody);
  unattendedRoutes(app, custody);
};

/** GET /accounts: every custody address of the caller and whether it can sign now. */
function accountRoutes(app: FastifyInstance, custody: CustodyAccounts): void {
  app.get(
    "/accounts",
    {
      schema: {
        tags: ["Wallets"],
        summary:
          "The caller's custody addresses as eth_accounts lists them, with unlock and unattended state",
        operationId: "listAccounts",
        response: { 200: Type.Array(AccountStatusSchema), 401: ProblemSchema },
      },
    },
    async (request) => custody.statuses(ownerOf(request)),
  );
}

/** The caller's custody addresses of wallet `id` (one, with `index`); not found as every wallet route says it. */
async function addressesOf(
  custody: CustodyAccounts,
  request: FastifyRequest,
  id: string,
  index: number | undefined,
) {
  const all = await custody.statuses(ownerOf(request));
  const mine = all.filter((a) => a.wallet_id === id && (index === undefined || a.index === index));
  if (mine.length === 0) {
    throw new ChaingateError(
      index === undefined ? `Wallet ${id} not found` : `Wallet ${id} has no address at index ${index}`,
      {
        code: index === undefined ? "WALLET_NOT_FOUND" : "ADDRESS_NOT_FOUND",
        status: 404,
        rpcCode: -32004,
      },
    );
  }
  return mine;
}

/** Unlocking and locking a wallet's addresses for signing. */
function unlockRoutes(app: FastifyInstance, custody: CustodyAccounts): void {
  app.post<{ Params: Static<typeof WalletParamsSchema>; Body: Static<typeof UnlockBody> }>(
    "/wallet/:id/unlock",
    {
      schema: {
        tags: ["Wallets"],
        summary:
          "Unlocks the wallet's addresses for eth_sendTransaction and the signing methods, for a while",
        operationId: "unlockWallet",
        params: WalletParamsSchema,
        body: UnlockBody,
        response: { 200: Unlocked, ...problems },
      },
      config: { rateGroup: "sign" },
    },
    async (request) => {
      const owner = ownerOf(request);
      const out = [];
      for (const account of await addressesOf(custody, request, request.params.id, request.body.index)) {
        const until = await custody.unlock(
          owner,
          account.address,
          request.body.password,
          request.body.seconds,
        );
        out.push({
          address: account.address,
          index: account.index,
          unlocked_until: until,
          unlocked_on: custody.unlockScope,
        });
      }
      return out;
    },
  );

  app.post<{ Params: Static<typeof WalletParamsSchema>; Body: Static<typeof LockBody> }>(
    "/wallet/:id/lock",
    {
      schema: {
        tags: ["Wallets"],
        summary: "Ends the unlock of the wallet's addresses (all, or the one at index)",
        operationId: "lockWallet",
        params: WalletParamsSchema,
        body: LockBody,
        response: { 200: Unlocked, ...problems },
      },
    },
    async (request) => {
      const owner = ownerOf(request);
      const out = [];
      for (const account of await addressesOf(custody, request, request.params.id, request.body?.index)) {
        await custody.lock(owner, account.address);
        out.push({ address: account.address, index: account.index, unlocked_until: null });
      }
      return out;
    },
  );
}

const UnattendedResult = Type.Object({
  wallet_id: Type.String(),
  unattended: Type.Boolean(),
  addresses: Type.Array(Type.String()),
});

/** Unattended signing (sealed passwords) turned on and off per wallet. */
function unattendedRoutes(app: FastifyInstance, custody: CustodyAccounts): void {
  app.post<{ Params: Static<typeof WalletParamsSchema>; Body: Static<typeof UnattendedBody> }>(
    "/wallet/:id/unattended",
    {
      schema: {
        tags: ["Wallets"],
        summary: "Lets chaingate sign for this wallet with no unlock (keys sealed under the server key)",
        description:
          "Needs an admin API key, the wallet's password and a server key (CHAINGATE_SEAL_KEY_FILE). Wrong passwords from an admin key that does not own the wallet count against that key's own allowance on it (5 free, then a lock of 1 s doubling to 5 min), never against the owner's, so no admin can lock a tenant out of its wallet.",
        operationId: "makeWalletUnattended",
        params: WalletParamsSchema,
        body: UnattendedBody,
        response: { 200: UnattendedResult, ...problems },
      },
      config: { rateGroup: "sign" },
    },
    async (request) => {
      const admin = requireAdmin(
        request,
        "making a wallet unattended needs an admin API key and the wallet's password",
      );
      // An admin names any wallet: no owner filter. Its wrong passwords count on its own allowance.
      const addresses = await custody.makeUnattended(request.params.id, request.body.password, null, admin);
      request.log.warn({ wallet: request.params.id }, "wallet made unattended");
      return { wallet_id: request.params.id, unattended: true, addresses };
    },
  );

  app.delete<{ Params: Static<typeof WalletParamsSchema> }>(
    "/wallet/:id/unattended",
    {
      schema: {
        tags: ["Wallets"],
        summary: "Stops unattended signing for this wallet (its sealed keys are deleted)",
        operationId: "removeWalletUnattended",
        params: WalletParamsSchema,
        response: { 200: UnattendedResult, ...problems },
      },
    },
    async (request) => {
      // The wallet's own tenant may always withdraw; an admin may for any wallet.
      const owner = request.tenant?.role === "admin" ? null : ownerOf(request);
      await custody.removeUnattended(request.params.id, owner);
      request.log.warn({ wallet: request.params.id }, "wallet no longer unattended");
      return { wallet_id: request.params.id, unattended: false, addresses: [] };
    },
  );
}
