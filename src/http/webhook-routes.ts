/** REST for a tenant's webhooks: register (the secret is shown once), list, remove, the delivery log, redeliver. */
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { ChaingateError } from "../errors/chaingate-error.js";
import { ProblemSchema, WalletParamsSchema } from "../wallets/wallet-schemas.js";
import type { WalletService } from "../wallets/wallet-service.js";
import type { BalanceWatch } from "../webhooks/balance-watch.js";
import { EVENT_PATTERN, EVENT_TYPES, isKnownPattern } from "../webhooks/event-types.js";
import type { WebhookStore } from "../webhooks/webhook-store.js";
import { ownerOf } from "./access-control.js";
import { useRestBodies } from "./rest-body.js";
import { useStrictValidation } from "./strict-validation.js";

export interface WebhookRoutesOptions {
  webhooks: WebhookStore;
  balances: BalanceWatch;
  /** Whose wallet a balance alert names. */
  wallets: WalletService;
}

const BalanceAlertBody = Type.Object(
  {
    chain_id: Type.Integer({ minimum: 1 }),
    below: Type.String({ pattern: "^[0-9]{1,78}$", description: "wei, decimal" }),
  },
  { additionalProperties: false },
);
const BalanceAlertQuery = Type.Object(
  { chain_id: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);

const WebhookSchema = Type.Object(
  { id: Type.String(), url: Type.String(), events: Type.Array(Type.String()), created_at: Type.String() },
  { title: "webhook" },
);

const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    events: Type.Array(Type.String({ pattern: EVENT_PATTERN.source }), {
      minItems: 1,
      maxItems: 50,
      description: `event types (${EVENT_TYPES.join(", ")}), a group such as "transaction.*", or "*"`,
    }),
  },
  { additionalProperties: false },
);

const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String(),
    type: Type.String(),
    state: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]),
    attempts: Type.Integer(),
    next_attempt_at: Type.Union([Type.String(), Type.Null()]),
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    delivered_at: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "delivery" },
);

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  delivery: Type.String({ minLength: 1, maxLength: 100 }),
});
const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const problems = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 413: ProblemSchema };

export const webhookRoutes: FastifyPluginAsync<WebhookRoutesOptions> = async (
  app,
  { webhooks, balances, wallets },
) => {
  useStrictValidation(app);
  useRestBodies(app);
  endpointRoutes(app, webhooks);
  deliveryRoutes(app, webhooks);
  balanceAlertRoutes(app, balances, wallets);
};

type Webhooks = WebhookRoutesOptions["webhooks"];

/** Registering, listing, reading and removing the caller's endpoints. */
function endpointRoutes(app: FastifyInstance, webhooks: Webhooks): void {
  app.post<{ Body: Static<typeof CreateWebhookBody> }>(
    "/webhooks",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "Registers an endpoint; answers its id and signing secret (shown this once)",
        operationId: "createWebhook",
        body: CreateWebhookBody,
        response: { 200: Type.Object({ ...WebhookSchema.properties, secret: Type.String() }), ...problems },
      },
    },
    async (request) => {
      const unknown = request.body.events.find((e) => !isKnownPattern(e));
      if (unknown !== undefined) {
        throw new ChaingateError(`"${unknown}" is not an event type`, { code: "VALIDATION_FAILED" });
      }
      return webhooks.create(ownerOf(request), request.body.url, request.body.events);
    },
  );

  app.get(
    "/webhooks",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "The caller's endpoints (without their secrets)",
        operationId: "listWebhooks",
        response: { 200: Type.Array(WebhookSchema), ...problems },
      },
    },
    async (request) => webhooks.list(ownerOf(request)),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    "/webhooks/:id",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "One of the caller's endpoints",
        operationId: "getWebhook",
        params: IdParams,
        response: { 200: WebhookSchema, ...problems },
      },
    },
    async (request) => webhooks.get(ownerOf(request), request.params.id),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    "/webhooks/:id",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "Removes an endpoint and what it still had to receive",
        operationId: "deleteWebhook",
        params: IdParams,
        response: { 204: Type.Null(), ...problems },
      },
    },
    async (request, reply) => {
      await webhooks.delete(ownerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}

/** An endpoint's delivery log, and a delivery sent again. */
function deliveryRoutes(app: FastifyInstance, webhooks: Webhooks): void {
  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof PageQuery> }>(
    "/webhooks/:id/deliveries",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "The endpoint's delivery log, newest first",
        operationId: "listWebhookDeliveries",
        params: IdParams,
        querystring: PageQuery,
        response: {
          200: Type.Object({
            deliveries: Type.Array(DeliverySchema),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...problems,
        },
      },
    },
    async (request) =>
      webhooks.deliveries(
        ownerOf(request),
        request.params.id,
        request.query.cursor,
        request.query.limit ?? 100,
      ),
  );

  app.post<{ Params: Static<typeof DeliveryParams> }>(
    "/webhooks/:id/deliveries/:delivery/redeliver",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "Sends a delivery's event again (same event id), at once",
        operationId: "redeliverWebhook",
        params: DeliveryParams,
        response: { 200: DeliverySchema, ...problems },
      },
    },
    async (request) => webhooks.redeliver(ownerOf(request), request.params.id, request.params.delivery),
  );
}

/** wallet.balance_low alerts per wallet and chain. */
function balanceAlertRoutes(
  app: FastifyInstance,
  balances: WebhookRoutesOptions["balances"],
  wallets: WebhookRoutesOptions["wallets"],
): void {
  app.put<{ Params: Static<typeof WalletParamsSchema>; Body: Static<typeof BalanceAlertBody> }>(
    "/wallet/:id/balance_alert",
    {
      schema: {
        tags: ["Webhooks"],
        summary:
          "Raises wallet.balance_low when an address of the wallet falls below `below` wei on the chain",
        description:
          "Once per fall: the alert re-arms when the address is back above. Balances are read every --balance-check-ms.",
        operationId: "setBalanceAlert",
        params: WalletParamsSchema,
        body: BalanceAlertBody,
        response: {
          200: Type.Object({ wallet_id: Type.String(), ...BalanceAlertBody.properties }),
          ...problems,
        },
      },
    },
    async (request) => {
      // Throws "not found" for another tenant's wallet, as every wallet route does.
      await wallets.get(request.params.id, undefined, ownerOf(request));
      await balances.set(
        request.params.id,
        request.body.chain_id,
        BigInt(request.body.below),
        ownerOf(request),
      );
      return { wallet_id: request.params.id, ...request.body };
    },
  );

  app.delete<{ Params: Static<typeof WalletParamsSchema>; Querystring: Static<typeof BalanceAlertQuery> }>(
    "/wallet/:id/balance_alert",
    {
      schema: {
        tags: ["Webhooks"],
        summary: "Removes the wallet's balance alert on a chain",
        operationId: "deleteBalanceAlert",
        params: WalletParamsSchema,
        querystring: BalanceAlertQuery,
        response: { 204: Type.Null(), ...problems },
      },
    },
    async (request, reply) => {
      await wallets.get(request.params.id, undefined, ownerOf(request));
      await balances.remove(request.params.id, request.query.chain_id);
      return reply.code(204).send();
    },
  );
}
