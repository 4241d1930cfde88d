/** The composition root: builds every subsystem from the configuration, in dependency order, and stops them in reverse. */
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApp } from "./app.js";
import { appendAudit } from "./audit/audit-log.js";
import { ApiKeyStore } from "./auth/api-keys.js";
import { KeyRing } from "./auth/key-ring.js";
import { assertSafeListen } from "./auth/listen-policy.js";
import { RateLimiter } from "./auth/rate-limiter.js";
import type { Config } from "./config/config.js";
import { ConfigError } from "./config/load-config.js";
import { resolveSystemContracts } from "./contracts/resolve-system.js";
import type { SystemContracts } from "./contracts/system-contracts.js";
import { SignerMethods } from "./custody/signer-methods.js";
import { startCustody } from "./custody/start-custody.js";
import { type Devnet, startEmbeddedChains } from "./devnet/devnet.js";
import { devnetFunder } from "./devnet/fund-addresses.js";
import { startFilters } from "./filters/start-filters.js";
import { signatureGuard } from "./keys/checked-signer.js";
import { startPeriodic } from "./lifecycle/periodic-task.js";
import { createShutdown, type Lifecycle } from "./lifecycle/shutdown.js";
import { createLogger } from "./logging/create-logger.js";
import { memberOperations } from "./members/member-operations.js";
import { MemberService } from "./members/member-service.js";
import { Metrics } from "./metrics/metrics.js";
import { consensusRefusal } from "./rpc/dispatcher.js";
import { upstreamTraitsOf } from "./rpc/method-table.js";
import { ResponseCache } from "./rpc/response-cache.js";
import { prepareDataDirOrWarn } from "./store/data-dir.js";
import type { Store } from "./store/database.js";
import { HeldSlots } from "./store/held-slots.js";
import { HEARTBEAT_MS, InstanceRegistry } from "./store/instance-registry.js";
import { openConfiguredStore } from "./store/open-configured-store.js";
import { tokenOperations } from "./tokens/token-operations.js";
import { TokenService } from "./tokens/token-service.js";
import { startTracing } from "./tracing/start-tracing.js";
import { LaneLimits } from "./transport/lane-limits.js";
import type { Relayer } from "./transport/relayer.js";
import { startRelayer } from "./transport/start-relayer.js";
import { transportOperations } from "./transport/transport-operations.js";
import { TransportService } from "./transport/transport-service.js";
import { startTransactions } from "./tx/start-transactions.js";
import type { TransactionPipeline } from "./tx/transaction-pipeline.js";
import type { TransactionTracker } from "./tx/transaction-tracker.js";
import { transferOperations } from "./tx/transfer-operations.js";
import type { ChainRegistry } from "./upstream/chain-registry.js";
import { chainTrust } from "./upstream/chain-trust.js";
import { chainEntries, type StartedChains, startChains } from "./upstream/start-chains.js";
import { startWallets } from "./wallets/start-wallets.js";
import type { WalletService } from "./wallets/wallet-service.js";
import { startWebhooks } from "./webhooks/start-webhooks.js";

export interface Runtime {
  readonly app: FastifyInstance;
  readonly wallets: WalletService;
  readonly pipeline: TransactionPipeline;
  readonly tracker: TransactionTracker;
  readonly url: string;
  readonly config: Config;
  readonly chains: ChainRegistry;
  readonly store: Store;
  readonly devnet: Devnet | undefined;
  /** Undefined when no operator key is configured or the contracts are not deployed (real networks). */
  readonly system: SystemContracts | undefined;
  readonly relayer: Relayer | undefined;
  /** The instances sharing the store (their heartbeats). */
  readonly registry: InstanceRegistry;
  stop(): Promise<void>;
}

export interface RuntimeOptions {
  logger?: Logger;
  /** Skip listening on a port (tests that use inject()). */
  listen?: boolean;
  /** Deploy missing system contracts on real networks too (`chaingate contracts deploy`). */
  deployContracts?: boolean;
  /** Leave the relayer stopped (tests that drive it by hand). */
  relay?: boolean;
}

export async function startChaingate(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const shutdown = createShutdown(logger);
  const life = { logger, shutdown };
  try {
    checkConsensusMethods(config);
    prepareDataDirOrWarn(config.dataDir, logger);
    const devnet = config.chains === undefined ? await startEmbeddedChains(config, life) : undefined;
    const started = await startChains(
      chainEntries(config, devnet?.nodes ?? []),
      config,
      life,
      upstreamTraitsOf,
    );
    const chains = started.registry;
    const store = await openConfiguredStore(config, life);
    const instance = await joinInstances(store, life);
    await startConfiguredTracing(config, instance, life);
    auditSignatureMismatches(store, logger);
    // Instances on one store share their heads: none answers below one another has served.
    for (const chain of started.list) {
      const stop = chain.head?.shareThrough(store.bus, chain.chainId);
      if (stop) shutdown.add(`head sharing ${chain.chainId}`, stop);
    }
    const services = await startServices(config, { store, chains, started, devnet, instance, ...life });
    const movers = await startValueMovers(config, options, {
      store,
      chains,
      services,
      embedded: devnet !== undefined,
      ...life,
    });
    const app = await startHttp(config, options, {
      store,
      chains,
      started,
      devnet,
      instance,
      services,
      movers,
      ...life,
    });
    const url = options.listen === false ? "" : await app.listen({ port: config.port, host: config.host });
    if (options.listen === false) await app.ready();
    const chainIds = started.list.map((c) => c.chainId);
    logger.info({ url, chains: chainIds, home: chains.homeChainId, store: store.kind }, "chaingate ready");
    const stop = () => shutdown.run();
    return {
      app,
      wallets: services.wallets,
      pipeline: services.tx.pipeline,
      tracker: services.tx.tracker,
      url,
      config,
      chains,
      store,
      devnet,
      system: movers.system,
      relayer: movers.relayer,
      registry: instance.registry,
      stop,
    };
  } catch (error) {
    await shutdown.run();
    throw error;
  }
}

interface Instance {
  registry: InstanceRegistry;
  slots: HeldSlots;
  /** This instance's share of a per-key cap. */
  share: (cap: number) => number;
}

/** This instance's heartbeat on the store: per-key limits are divided among the instances alive on it. */
async function joinInstances(store: Store, life: Lifecycle): Promise<Instance> {
  const registry = new InstanceRegistry(store);
  await registry.beat();
  const slots = new HeldSlots(store, registry);
  startPeriodic(
    {
      name: "instance heartbeat",
      everyMs: HEARTBEAT_MS,
      run: async () => {
        await registry.beat();
        if (store.bus.shared) await slots.prune();
      },
    },
    life,
  );
  life.shutdown.add("instance registry", () => registry.leave());
  return { registry, slots, share: (cap: number) => registry.share(cap) };
}

/** OpenTelemetry traces when the OTEL_* variables ask for them; flushed after everything else has stopped. */
async function startConfiguredTracing(config: Config, instance: Instance, life: Lifecycle): Promise<void> {
  if (config.tracing === undefined) return;
  const tracing = await startTracing(config.tracing, instance.registry.id);
  life.shutdown.add("tracing", () => tracing.shutdown());
  life.logger.info(
    // The collector's origin only: a path or query may hold credentials.
    { collector: new URL(config.tracing.endpoint).origin, protocol: config.tracing.protocol },
    "exporting traces (OpenTelemetry)",
  );
}

/** A signature that does not recover to its address is refused where it is made; it is logged and audited here. */
function auditSignatureMismatches(store: Store, logger: Logger): void {
  signatureGuard.listen((address, detail) => {
    logger.error({ address, detail }, "signature mismatch: refused, and the address held until a self-test");
    appendAudit(store.db, {
      apiKeyId: null,
      operation: "signature_check",
      decision: "denied",
      address,
      rule: "signature_mismatch",
      detail: { reason: detail },
    }).catch((error: unknown) => logger.warn({ err: error }, "could not audit a signature mismatch"));
  });
}

interface StartDeps extends Lifecycle {
  store: Store;
  chains: ChainRegistry;
  started: StartedChains;
  devnet: Devnet | undefined;
  instance: Instance;
}

type Services = Awaited<ReturnType<typeof startServices>>;

/** Filters, wallets, custody, webhooks and transactions: the subsystems every route stands on. */
async function startServices(config: Config, deps: StartDeps) {
  const { store, chains, started, devnet, instance, logger, shutdown } = deps;
  const life = { logger, shutdown };
  const { filters, logs, hub, resumable } = await startFilters(config, {
    store,
    chains,
    share: instance.share,
    ...life,
  });
  const funder = devnet && config.devnet.fundWallets ? devnetFunder(chains) : undefined;
  const { wallets, deriver, hsm } = startWallets(config, {
    store,
    onAddressesCreated: funder,
    readiness: started.readiness,
    ...life,
  });
  const custody = startCustody(config, {
    store,
    wallets,
    readiness: started.readiness,
    instanceId: instance.registry.id,
    ...life,
  });
  // Unattended addresses can always be re-signed for a fee bump, with no unlock in memory.
  const fallbackSigner = (address: string) => custody.unattendedSigner(address).catch(() => undefined);
  const { webhooks, balances } = startWebhooks(config, { store, chains, ...life });
  const tx = startTransactions(config, { store, chains, wallets, fallbackSigner, ...life });
  return { filters, logs, hub, resumable, wallets, deriver, hsm, custody, webhooks, balances, tx };
}

/** chaingate's contracts, then members, tokens, transports and the relayer that move value through them. */
async function startValueMovers(
  config: Config,
  options: RuntimeOptions,
  deps: Lifecycle & { store: Store; chains: ChainRegistry; services: Services; embedded: boolean },
) {
  const { store, chains, services, embedded, logger, shutdown } = deps;
  const { pipeline, guard } = services.tx;
  const { system, systemOf } = await resolveSystemContracts({
    config,
    chains,
    pipeline,
    logger,
    embedded,
    deploy: options.deployContracts === true,
    hsm: services.hsm,
  });
  // Transports through chaingate's own endpoint are judged by whom they reach.
  if (system) guard.isEndpoint = (_chainId, address) => address === system.endpoint.toLowerCase();
  const members = new MemberService({ store, chains, pipeline, system: systemOf });
  const tokens = new TokenService({ pipeline, system: systemOf });
  const transports = new TransportService({ store, chains, members, tokens, system: systemOf });
  const lanes = new LaneLimits(store);
  const run = options.relay !== false;
  const relayer = startRelayer(config, { store, chains, pipeline, system, lanes, run, logger, shutdown });
  return { system, members, tokens, transports, lanes, relayer };
}

/** API keys, the response cache and the HTTP application with every route; stopped first on shutdown. */
async function startHttp(
  config: Config,
  options: RuntimeOptions,
  deps: StartDeps & { services: Services; movers: Awaited<ReturnType<typeof startValueMovers>> },
): Promise<FastifyInstance> {
  const { store, chains, started, devnet, instance, services, movers, logger, shutdown } = deps;
  const { wallets, custody, filters } = services;
  const { fees, pipeline, idempotency, transactions, policies, guard, filler, authorizations } = services.tx;
  const keys = new KeyRing(new ApiKeyStore(store));
  await keys.start();
  shutdown.add("key ring", () => keys.stop());
  if (options.listen !== false) await assertSafeListen(config, keys);
  const cache = new ResponseCache(config.cacheBytes);
  // A chain that went back may differ anywhere, even in blocks cached as final.
  for (const chain of started.list) chain.head?.onReset(() => cache.clear());
  const signer = new SignerMethods({
    accounts: custody,
    pipeline,
    fees,
    idempotency,
    filters,
    nodeAccounts: config.custody.nodeAccounts && devnet !== undefined,
    guard,
    syncSend: config.syncSend,
    filler,
    authorizations,
    store,
    chains,
  });
  const metrics = new Metrics({
    chains,
    store,
    cache,
    hub: services.hub,
    deriver: services.deriver,
    quorumOf: (chainId) => chainTrust(config, chainId).quorum,
  });
  const app = await buildApp({
    ...{ config, logger, store, chains, filters, logs: services.logs, wallets, transactions, custody },
    ...{ cache, hub: services.hub, resumable: services.resumable, signer, metrics },
    ...{ idempotency, keys, readiness: started.readiness, policies, lanes: movers.lanes },
    ...{ webhooks: services.webhooks, balances: services.balances },
    operations: [
      ...transferOperations(store),
      ...memberOperations(movers.members),
      ...tokenOperations({ wallets, chains, tokens: movers.tokens }),
      ...transportOperations({ wallets, chains, transports: movers.transports, store }),
    ],
    ...(devnet ? { embedded: (chainId: number) => devnet.nodeStatus(chainId) } : {}),
    limiters: {
      withKeys: new RateLimiter(config.rateLimits, Date.now, instance.share),
      withoutKeys: new RateLimiter(config.rateLimitsWithoutKeys, Date.now, instance.share),
    },
    share: instance.share,
    slots: instance.slots,
  });
  shutdown.add("http", async () => {
    // Stop accepting, let in-flight requests finish, but only for so long.
    const cut = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutMs);
    await app.close().finally(() => clearTimeout(cut));
  });
  return app;
}

/** A chain's default consensus may only name plain node reads: the method table is the judge, so it is checked here, not in the config layer. */
function checkConsensusMethods(config: Config): void {
  const problems = (config.chains ?? []).flatMap((chain, i) =>
    Object.keys(chain.consensus?.methods ?? {}).flatMap((method) => {
      const refusal = consensusRefusal(method);
      return refusal === undefined
        ? []
        : [`config file: chains[${i}].consensus.methods.${method}: ${refusal}`];
    }),
  );
  if (problems.length > 0) throw new ConfigError(problems);
}
