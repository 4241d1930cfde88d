/** Builds the Fastify application from a validated config and an explicit dependency object. */

import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import type { KeyRing } from "./auth/key-ring.js";
import type { Config } from "./config/config.js";
import type { CustodyAccounts } from "./custody/custody-accounts.js";
import type { SignerMethods } from "./custody/signer-methods.js";
import { ChaingateError } from "./errors/chaingate-error.js";
import { methodNotFound } from "./errors/rpc-errors.js";
import type { FilterService } from "./filters/filter-service.js";
import type { LogQuery } from "./filters/log-query.js";
import type { ResumableSubscriptions } from "./filters/resumable-subscriptions.js";
import type { SubscriptionHub } from "./filters/subscription-hub.js";
import {
  type RateLimiters,
  RequestsInFlight,
  requireAdmin,
  useAccessControl,
} from "./http/access-control.js";
import { AnswerBudget } from "./http/answer-budget.js";
import { useBrowserGuard } from "./http/browser-guard.js";
import { consoleRoutes } from "./http/console-routes.js";
import { custodyRoutes } from "./http/custody-routes.js";
import { FastPaths, OpenRequests, serverWithFastPaths } from "./http/fast-path-server.js";
import { healthRoutes } from "./http/health-routes.js";
import { laneRoutes } from "./http/lane-routes.js";
import { type EmbeddedStatus, networkRoutes } from "./http/network-routes.js";
import { registerOpenApi } from "./http/openapi.js";
import { operationRoutes } from "./http/operation-routes.js";
import { policyRoutes } from "./http/policy-routes.js";
import { fromFastifyError, notFoundProblem, problemOf } from "./http/problem.js";
import { ReadFastPath } from "./http/read-fast-path.js";
import { newRequestId } from "./http/request-id.js";
import { rpcRoutes } from "./http/rpc-routes.js";
import { TransactionFastPath } from "./http/transaction-fast-path.js";
import { transactionRoutes } from "./http/transaction-routes.js";
import { formatValidationErrors } from "./http/validation-errors.js";
import { walletRoutes } from "./http/wallet-routes.js";
import { webhookRoutes } from "./http/webhook-routes.js";
import { registerWebSocket } from "./http/websocket-routes.js";
import type { IdempotencyStore } from "./idempotency/idempotency-store.js";
import { FairGate } from "./keys/fair-gate.js";
import { AccessLog } from "./logging/access-log.js";
import { lazyChildLogger } from "./logging/lazy-child.js";
import type { Metrics } from "./metrics/metrics.js";
import type { Operation } from "./operations/operation.js";
import type { PolicyStore } from "./policies/policy-store.js";
import { type CallContext, RpcDispatcher } from "./rpc/dispatcher.js";
import { errorText } from "./rpc/envelope.js";
import { methodPolicy } from "./rpc/method-policy.js";
import { METHODS } from "./rpc/method-table.js";
import { nearestMethod } from "./rpc/nearest-method.js";
import type { ResponseCache } from "./rpc/response-cache.js";
import type { Store } from "./store/database.js";
import type { HeldSlots } from "./store/held-slots.js";
import { nameRequestSpan } from "./tracing/request-span.js";
import type { LaneLimits } from "./transport/lane-limits.js";
import type { TransactionService } from "./tx/transaction-service.js";
import type { ChainRegistry } from "./upstream/chain-registry.js";
import type { ReadinessMonitor } from "./upstream/readiness.js";
import { ProblemSchema } from "./wallets/wallet-schemas.js";
import type { WalletService } from "./wallets/wallet-service.js";
import type { BalanceWatch } from "./webhooks/balance-watch.js";
import type { WebhookStore } from "./webhooks/webhook-store.js";

export interface AppDeps {
  config: Config;
  logger: Logger;
  store: Store;
  chains: ChainRegistry;
  filters: FilterService;
  logs: LogQuery;
  wallets: WalletService;
  transactions: TransactionService;
  /** Custody addresses as signing accounts (unlock, lock, unattended). */
  custody: CustodyAccounts;
  /** eth_accounts, eth_sign, eth_sendTransaction ... answered from custody wallets. */
  signer: SignerMethods;
  cache: ResponseCache;
  hub: SubscriptionHub;
  /** Resumable newHeads and logs subscriptions. */
  resumable?: ResumableSubscriptions;
  metrics: Metrics;
  /** The Members and Token Management rows. */
  operations: readonly Operation[];
  idempotency: IdempotencyStore;
  keys: KeyRing;
  limiters: RateLimiters;
  readiness: ReadinessMonitor;
  policies: PolicyStore;
  webhooks: WebhookStore;
  balances: BalanceWatch;
  /** Per-lane transport limits (admin routes). */
  lanes: LaneLimits;
  /** This instance's share of a per-key cap: the caps hold for every instance on the store. */
  share?: (cap: number) => number;
  /** Per-key WebSocket slots counted over the instances of a shared store. */
  slots?: HeldSlots;
  embedded?: (chainId: number) => EmbeddedStatus | undefined;
}

/**
 * Node calls the gateway has in flight before further ones queue, served fairly between tenants
 * (each queued call is bounded by the per-key limits on requests in flight).
 */
const UPSTREAM_CALLS_IN_FLIGHT = 64;

/** Every method path, for naming the one a mistyped path meant. */
const METHOD_NAMES = METHODS.map((m) => m.name);

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  // Made once the dispatcher exists.
  let fastPath: FastPaths | undefined;
  // One line per request, on the fast path too, written in batches (decision 102).
  const accessLog = config.logRequests ? AccessLog.of(deps.logger) : undefined;
  if (accessLog !== undefined) deps.metrics.readAccessLogDrops(() => accessLog.droppedLines);
  const inFlight = new RequestsInFlight(config.limits.concurrentPerKey, deps.share);
  const open = new OpenRequests();
  const app = createFastify(config, deps.logger, () => fastPath, open);
  // A commit with no other request in flight waits for the disk on the event loop (decision 189).
  deps.store.group.flushInlineWhen(() => open.count <= 1);
  useBrowserGuard(app, {
    keys: deps.keys,
    listenHost: config.host,
    vhosts: config.vhosts,
    allowedOrigins: config.allowedOrigins,
  });
  useAccessControl(app, deps.keys, deps.limiters, inFlight);
  useRequestRecords(app, deps.metrics, accessLog);
  if (config.tracing !== undefined) useRequestSpanNames(app);
  useErrorAnswers(app, config.bodyLimit);
  await registerOpenApi(app);
  const dispatcher = createDispatcher(deps);
  // While closing, Fastify answers 503 and closes connections: every request goes to it again.
  app.addHook("preClose", (done) => {
    fastPath = undefined;
    done();
  });
  const admission = {
    keys: deps.keys,
    limiters: deps.limiters,
    inFlight,
    guard: { listenHost: config.host, vhosts: config.vhosts, allowedOrigins: config.allowedOrigins },
    metrics: deps.metrics,
    logger: deps.logger,
    accessLog,
  };
  fastPath = new FastPaths(
    new ReadFastPath({
      ...admission,
      chains: deps.chains,
      dispatcher,
      maxResponseBytes: config.limits.responseBytes,
    }),
    new TransactionFastPath({ ...admission, transactions: deps.transactions, bodyLimit: config.bodyLimit }),
  );
  metricsRoute(app, deps.metrics);
  await registerRoutes(app, deps, dispatcher);
  return app;
}

/** The Fastify instance with chaingate's server (the read fast path in front), timeouts and validation. */
function createFastify(
  config: Config,
  logger: Logger,
  fastPath: () => FastPaths | undefined,
  open: OpenRequests,
): FastifyInstance {
  return Fastify({
    serverFactory: serverWithFastPaths(fastPath, open),
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimit,
    requestIdHeader: "x-request-id",
    // The access log writes the request lines; Fastify's own two lines a request cost 4x the rate (#35).
    logController: new LogController({ disableRequestLogging: true }),
    // No pino child (and its redaction set-up) per request until one logs.
    childLoggerFactory: lazyChildLogger,
    genReqId: newRequestId,
    // Slow clients must not hold a connection forever (a body that never finishes).
    // Node checks request deadlines every connectionsCheckingInterval (30 s by default), which would
    // let a slow client hold a connection far past the bound; check often enough to keep it.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: 60_000,
    http: {
      headersTimeout: Math.min(config.requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, config.requestTimeoutMs / 4)),
    },
    // verbose: a refusal says what was sent (validation-errors.ts); it costs nothing while a value is valid.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, verbose: true } },
    schemaErrorFormatter: formatValidationErrors,
  });
}

/** Each request's id header, its metric, and its access-log line. */
function useRequestRecords(app: FastifyInstance, metrics: Metrics, accessLog: AccessLog | undefined): void {
  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  app.addHook("onResponse", async (request, reply) => {
    // The route pattern, not the URL: one series per route however many ids callers send.
    const route = request.routeOptions.url ?? "unmatched";
    metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    accessLog?.record({
      id: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
      remoteAddress: request.ip,
      key: request.tenant?.keyId,
    });
  });
  app.addHook("onClose", (_app, done) => {
    accessLog?.flush();
    done();
  });
}

/** Each request's span named after its route once Fastify has matched it (tracing on only: a hook costs on every request). */
function useRequestSpanNames(app: FastifyInstance): void {
  app.addHook("onRequest", (request, _reply, done) => {
    nameRequestSpan(request.method, request.routeOptions.url, request.id);
    done();
  });
}

/** Errors as problems, and unknown paths answered with the method a near miss meant. */
function useErrorAnswers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error, request, reply) => {
    const translated = fromFastifyError(error, bodyLimit);
    const problem = problemOf(translated);
    if (problem.status >= 500) request.log.error({ err: error }, "request failed");
    reply.code(problem.status).type("application/problem+json").send(problem);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? request.url;
    const name = path.replace(/^\//, "");
    if (request.method === "POST") {
      // Any unknown POST path is an unknown method, in the JSON-RPC shape callers expect, with the
      // method a near miss most likely meant.
      const meant = nearestMethod(name, METHOD_NAMES);
      reply
        .code(200)
        .type("application/json; charset=utf-8")
        .send(errorText(null, methodNotFound(path, meant === undefined ? undefined : `/${meant}`)));
      return;
    }
    const meant = METHOD_NAMES.includes(name) ? name : nearestMethod(name, METHOD_NAMES);
    reply
      .code(404)
      .type("application/problem+json")
      .send(
        notFoundProblem(
          meant === undefined
            ? `No route ${request.method} ${path}`
            : `No route ${request.method} ${path}: method paths take POST (POST /${meant}${meant === name ? "" : ", the nearest method"})`,
        ),
      );
  });
}

/** The JSON-RPC dispatcher with the caller's budgets, the method policy and the fair share of node calls. */
function createDispatcher(deps: AppDeps): RpcDispatcher {
  const { config } = deps;
  return new RpcDispatcher({
    filters: deps.filters,
    logs: deps.logs,
    cache: deps.cache,
    signer: deps.signer,
    beforeSigning: (context) => takeBudget(deps.limiters, context, "sign", "sign requests"),
    beforeTrace: (context) => takeBudget(deps.limiters, context, "trace", "debug/trace/txpool calls"),
    onCall: (method, ok) => deps.metrics.observeRpcCall(method, ok),
    policy: methodPolicy(config.allowMethods, config.denyMethods),
    syncSend: config.syncSend,
    upstreamGate: new FairGate({
      what: "node calls",
      code: "UPSTREAM_BUSY",
      permits: UPSTREAM_CALLS_IN_FLIGHT,
      perTenant: Number.MAX_SAFE_INTEGER,
      queue: Number.MAX_SAFE_INTEGER,
    }),
  });
}

/** GET /metrics: every tenant's traffic and the operator's upstreams, for admin keys (anyone in keyless mode). */
function metricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get(
    "/metrics",
    {
      schema: {
        tags: ["Operations"],
        summary: "Prometheus metrics (text exposition format)",
        operationId: "metrics",
        response: {
          200: {
            description: "The Prometheus text exposition",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          403: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      requireAdmin(request, "/metrics covers every tenant and upstream: it needs an admin API key");
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    },
  );
  app.get(
    "/metrics/recent",
    {
      schema: {
        tags: ["Operations"],
        summary: "This instance's requests and error answers over the last ten minutes (the console's chart)",
        operationId: "recentRequests",
        response: { 200: RecentRequestsSchema, 403: ProblemSchema },
      },
    },
    async (request) => {
      requireAdmin(request, "/metrics/recent covers every tenant: it needs an admin API key");
      const { bucketSeconds, buckets } = metrics.history.recent();
      return {
        bucket_seconds: bucketSeconds,
        buckets: buckets.map((b) => ({
          at: new Date(b.at).toISOString(),
          requests: b.requests,
          errors: b.errors,
        })),
      };
    },
  );
}

const RecentRequestsSchema = Type.Object(
  {
    bucket_seconds: Type.Integer({ description: "each bucket's length" }),
    buckets: Type.Array(
      Type.Object({
        at: Type.String({ format: "date-time", description: "the bucket's start" }),
        requests: Type.Integer({ description: "requests answered in it" }),
        errors: Type.Integer({ description: "of those, answered 4xx or 5xx" }),
      }),
      { description: "oldest first; the last is the current, partial bucket" },
    ),
  },
  { title: "Recent requests" },
);

/** The WebSocket endpoint and every route plugin, each with what it needs of the dependencies. */
async function registerRoutes(app: FastifyInstance, deps: AppDeps, dispatcher: RpcDispatcher): Promise<void> {
  const { config } = deps;
  await registerWebSocket(app, {
    chains: deps.chains,
    dispatcher,
    hub: deps.hub,
    ...(deps.resumable ? { resumable: deps.resumable } : {}),
    batchLimit: config.batchLimit,
    maxMessageBytes: config.bodyLimit,
    keys: deps.keys,
    logs: deps.logs,
    socketsPerKey: config.limits.socketsPerKey,
    ...(deps.share ? { share: deps.share } : {}),
    ...(deps.slots ? { slots: deps.slots } : {}),
  });
  await app.register(rpcRoutes, {
    chains: deps.chains,
    dispatcher,
    batchLimit: config.batchLimit,
    bodyLimit: config.bodyLimit,
    maxResponseBytes: config.limits.responseBytes,
    // A key may hold one largest answer at a time, the process two (docs/security.md).
    answers: new AnswerBudget(
      config.limits.responseBytes,
      2 * config.limits.responseBytes,
      config.limits.answerBytesPerSecond,
    ),
  });
  await app.register(walletRoutes, { wallets: deps.wallets, maxAddresses: config.maxAddressesPerWallet });
  await app.register(transactionRoutes, { transactions: deps.transactions });
  await app.register(custodyRoutes, { custody: deps.custody });
  await app.register(policyRoutes, { policies: deps.policies, store: deps.store });
  await app.register(laneRoutes, { lanes: deps.lanes, chains: deps.chains });
  await app.register(webhookRoutes, {
    webhooks: deps.webhooks,
    balances: deps.balances,
    wallets: deps.wallets,
  });
  await app.register(operationRoutes, {
    operations: deps.operations,
    idempotency: deps.idempotency,
    bodyLimit: config.bodyLimit,
    checkSigner: (walletId, index, password, owner) => deps.wallets.unlock(walletId, index, password, owner),
  });
  await app.register(networkRoutes, {
    chains: deps.chains,
    ...(deps.embedded ? { embedded: deps.embedded } : {}),
  });
  await app.register(consoleRoutes);
  await app.register(healthRoutes, { readiness: deps.readiness, startedAt: Date.now() });
}

/** One token of the caller's budget for `group` (their key's, or their address's without keys); RATE_LIMITED when none is left. */
function takeBudget(
  limiters: AppDeps["limiters"],
  context: CallContext,
  group: "sign" | "trace",
  what: string,
): void {
  const limiter =
    context.owner === null || context.owner === undefined ? limiters.withoutKeys : limiters.withKeys;
  const taken = limiter.take(context.tenant, group);
  if (!taken.ok) {
    throw new ChaingateError(`too many ${what}; retry in ${taken.retryAfterSeconds} s`, {
      code: "RATE_LIMITED",
      data: { retry_after_seconds: taken.retryAfterSeconds },
    });
  }
}
