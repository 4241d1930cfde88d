/** Starts a whole chaingate: embedded chains or upstream pools, the store, the app; and stops it all again. */
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApp } from "./app.js";
import { ApiKeyStore } from "./auth/api-keys.js";
import { KeyRing } from "./auth/key-ring.js";
import { RateLimiter } from "./auth/rate-limiter.js";
import type { Config } from "./config/config.js";
import { operatorAccount } from "./contracts/operator.js";
import {
  deploySystemContracts,
  missingSystemContracts,
  type SystemContracts,
  systemAddresses,
} from "./contracts/system-contracts.js";
import { CustodyAccounts } from "./custody/custody-accounts.js";
import { SealKey } from "./custody/seal-key.js";
import { SignerMethods } from "./custody/signer-methods.js";
import { UnlockedAccounts } from "./custody/unlocked-accounts.js";
import { type Devnet, startDevnet } from "./devnet/devnet.js";
import { devnetFunder } from "./devnet/fund-addresses.js";
import { ChaingateError } from "./errors/chaingate-error.js";
import { FilterService } from "./filters/filter-service.js";
import { LogQuery } from "./filters/log-query.js";
import { PendingPool } from "./filters/pending-pool.js";
import { SubscriptionHub } from "./filters/subscription-hub.js";
import { KeyDeriver } from "./keys/kdf.js";
import { UnlockCache } from "./keys/unlock-cache.js";
import { createLogger } from "./logging/create-logger.js";
import { memberOperations } from "./members/member-operations.js";
import { MemberService } from "./members/member-service.js";
import { Metrics } from "./metrics/metrics.js";
import type { Operation } from "./operations/operation.js";
import { ResponseCache } from "./rpc/response-cache.js";
import { prepareDataDir } from "./store/data-dir.js";
import { openStore, type Store } from "./store/database.js";
import { tokenOperations } from "./tokens/token-operations.js";
import { TokenService } from "./tokens/token-service.js";
import { Relayer } from "./transport/relayer.js";
import { transportOperations } from "./transport/transport-operations.js";
import { TransportService } from "./transport/transport-service.js";
import { FeeOracle } from "./tx/fee-oracle.js";
import { IdempotencyStore } from "./tx/idempotency.js";
import { NonceLedger } from "./tx/nonce-ledger.js";
import { SignerRegistry } from "./tx/signer-registry.js";
import { TransactionPipeline } from "./tx/transaction-pipeline.js";
import { TransactionService } from "./tx/transaction-service.js";
import { TransactionTracker } from "./tx/transaction-tracker.js";
import { transferOperations } from "./tx/transfer-operations.js";
import { ChainRegistry } from "./upstream/chain-registry.js";
import { ReadinessMonitor } from "./upstream/readiness.js";
import { resolveChain } from "./upstream/resolve-chain.js";
import { WsHeadWatcher } from "./upstream/ws-head-watcher.js";
import { WalletService } from "./wallets/wallet-service.js";

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

/** Loopback only: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export async function startChaingate(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.error({ err: error }, "error during shutdown");
      }
    }
  };

  try {
    const looseMode = prepareDataDir(config.dataDir);
    if (looseMode !== undefined)
      logger.warn(
        { dataDir: config.dataDir, mode: looseMode.toString(8) },
        "the data directory can be read by other users and holds every keystore: chmod 700 it",
      );
    let devnet: Devnet | undefined;
    let entries: { chainId?: number; name?: string; urls: string[]; ws?: (string | undefined)[] }[];
    if (config.chains === undefined) {
      devnet = await startDevnet({
        dataDir: config.dataDir,
        chainIds: config.devnet.chainIds,
        blockTime: config.devnet.blockTime,
        logger,
      });
      cleanups.push(() => devnet!.stop());
      entries = devnet.nodes.map((n) => ({ chainId: n.chainId, name: `devnet-${n.chainId}`, urls: [n.url] }));
    } else {
      entries = config.chains.map((c) => ({
        ...(c.chainId === undefined ? {} : { chainId: c.chainId }),
        ...(c.name === undefined ? {} : { name: c.name }),
        urls: c.upstreams.map((u) => u.url),
        ws: c.upstreams.map((u) => u.ws),
      }));
    }
    const chainList = await Promise.all(
      entries.map((e) =>
        resolveChain(e, { timeoutMs: config.upstreamTimeoutMs, headPollMs: config.headPollMs, logger }),
      ),
    );
    cleanups.push(async () => {
      await Promise.all(chainList.map((c) => c.pool.close()));
    });
    for (const chain of chainList) chain.head?.start();
    // Upstreams with a WebSocket push their new heads; polling carries on for health, lag and latency.
    const watchers = chainList.flatMap((chain, i) =>
      (entries[i]?.ws ?? []).flatMap((ws, j) => {
        const label = chain.pool.upstreams[j]?.label;
        if (ws === undefined || label === undefined) return [];
        return [
          new WsHeadWatcher({
            url: ws,
            logger,
            onHead: (head) => {
              if (chain.pool.noteHead(label, head)) chain.head?.observe(head);
            },
          }),
        ];
      }),
    );
    for (const watcher of watchers) watcher.start();
    cleanups.push(async () => {
      for (const watcher of watchers) watcher.stop();
      for (const chain of chainList) chain.head?.stop();
    });
    const ids = chainList.map((c) => c.chainId);
    if (new Set(ids).size !== ids.length) {
      throw new ChaingateError(`two configured chains are the same chain (ids ${ids.join(", ")})`, {
        code: "CHAIN_ID_MISMATCH",
      });
    }
    const chains = new ChainRegistry(chainList, config.homeChainId ?? chainList[0]!.chainId);
    const readiness = new ReadinessMonitor(chains, 1_000, logger);
    await readiness.check();
    readiness.start();
    cleanups.push(() => readiness.stop());

    const store = await openStore(
      config.databaseUrl
        ? { kind: "postgres", url: config.databaseUrl }
        : { kind: "sqlite", path: join(config.dataDir, "chaingate.sqlite") },
      (error) => logger.warn({ err: error }, "database connection lost; the next query opens a fresh one"),
    );
    cleanups.push(() => store.close());

    const pending = new PendingPool({
      store,
      chains,
      logger,
      pollMs: config.headPollMs,
      retainMs: config.filterIdleSeconds * 1000,
    });
    await pending.start();
    cleanups.push(() => pending.stop());
    const logs = new LogQuery(config.limits);
    const filters = new FilterService({
      store,
      pending,
      idleMs: config.filterIdleSeconds * 1000,
      logs,
      maxPerTenant: config.limits.filtersPerKey,
    });
    const sweeper = setInterval(
      () => {
        filters.sweep().catch((error: unknown) => logger.warn({ err: error }, "filter sweep failed"));
      },
      Math.min(30_000, config.filterIdleSeconds * 1000),
    );
    sweeper.unref();
    cleanups.push(async () => clearInterval(sweeper));

    const unlockCache = new UnlockCache(config.unlockCacheSeconds * 1000);
    const pruner = setInterval(() => unlockCache.prune(), 30_000);
    pruner.unref();
    cleanups.push(async () => {
      clearInterval(pruner);
      unlockCache.clear();
    });
    const deriver = new KeyDeriver(config.scryptConcurrency);
    const wallets = new WalletService({
      store,
      deriver,
      cache: unlockCache,
      kdf: config.kdf,
      maxAddresses: config.maxAddressesPerWallet,
      ...(devnet && config.devnet.fundWallets ? { onAddressesCreated: devnetFunder(chains) } : {}),
    });

    const fees = new FeeOracle();
    const signers = new SignerRegistry(config.unlockCacheSeconds * 1000);
    const signerPruner = setInterval(() => signers.prune(), 30_000);
    signerPruner.unref();
    cleanups.push(async () => clearInterval(signerPruner));
    const pipeline = new TransactionPipeline({
      store,
      ledger: new NonceLedger(store),
      fees,
      gasMarginPercent: config.gasMarginPercent,
      logger,
      signers,
    });
    const idempotency = new IdempotencyStore(store);
    const transactions = new TransactionService({ wallets, chains, pipeline, idempotency });
    const unlocked = new UnlockedAccounts();
    const custody = new CustodyAccounts({
      store,
      wallets,
      unlocked,
      sealKey: config.custody.sealKey === undefined ? undefined : new SealKey(config.custody.sealKey),
      unlockSeconds: config.custody.unlockSeconds,
      unlockMaxSeconds: config.custody.unlockMaxSeconds,
    });
    const unlockPruner = setInterval(() => unlocked.prune(), 30_000);
    unlockPruner.unref();
    cleanups.push(async () => {
      clearInterval(unlockPruner);
      unlocked.clear();
    });
    const tracker = new TransactionTracker({
      store,
      chains,
      logger,
      confirmations: config.confirmations,
      intervalMs: config.trackerIntervalMs,
      resendAfterMs: config.resendAfterSeconds * 1000,
      replaceAfterMs: config.replaceAfterSeconds * 1000,
      maxFeePerGas: BigInt(config.maxFeeGwei) * 1_000_000_000n,
      pipeline,
      fees,
      signers,
      // Unattended addresses can always be re-signed for a fee bump, with no unlock in memory.
      fallbackSigner: (address) => custody.unattendedSigner(address).catch(() => undefined),
    });
    // Started before the app answers: stored but unsent transactions (a crash) go out at once.
    tracker.start();
    cleanups.push(() => tracker.stop());

    const operator = operatorAccount(config, devnet !== undefined);
    let system: SystemContracts | undefined;
    if (operator && (devnet || options.deployContracts)) {
      system = await deploySystemContracts({
        chains,
        operator,
        pipeline,
        logger,
        fund: devnet !== undefined,
      });
    } else if (operator) {
      const missing = await missingSystemContracts(chains, operator.address);
      if (missing.length === 0)
        system = { operator, ...systemAddresses(operator.address), homeChainId: chains.homeChainId };
      else
        logger.warn(
          { missing },
          "system contracts missing: run `chaingate contracts deploy`; members and transports are off",
        );
    } else {
      logger.warn("no operator key (CHAINGATE_OPERATOR_KEY): members and transports are off");
    }
    const systemOf = (): SystemContracts => {
      if (system) return system;
      throw new ChaingateError(
        operator
          ? "chaingate's contracts are not deployed on every chain: run `chaingate contracts deploy`"
          : "no operator key is configured (CHAINGATE_OPERATOR_KEY), so members and transports are off",
        { code: "CONTRACTS_UNAVAILABLE", status: 503, rpcCode: -32011 },
      );
    };
    const members = new MemberService({ store, chains, pipeline, system: systemOf });
    const tokens = new TokenService({ pipeline, system: systemOf });
    const transports = new TransportService({ store, chains, members, tokens, system: systemOf });
    const operations: Operation[] = [
      ...transferOperations(store),
      ...memberOperations(members),
      ...tokenOperations({ wallets, chains, tokens }),
      ...transportOperations({ wallets, chains, transports, store }),
    ];
    let relayer: Relayer | undefined;
    if (system) {
      relayer = new Relayer({
        store,
        chains,
        pipeline,
        system,
        logger,
        intervalMs: config.relayerIntervalMs,
        confirmations: config.confirmations,
      });
      if (options.relay !== false) relayer.start();
      const started = relayer;
      cleanups.push(() => started.stop());
    }

    const keys = new KeyRing(new ApiKeyStore(store));
    await keys.start();
    cleanups.push(async () => keys.stop());
    if (options.listen !== false && !isLoopback(config.host) && !config.insecure && !(await keys.enabled())) {
      throw new ChaingateError(
        `refusing to listen on ${config.host} with no API keys: anyone who can reach it could use every wallet. ` +
          "Create a key (chaingate keys create --role admin), listen on 127.0.0.1, or pass --insecure.",
        { code: "INSECURE_LISTEN" },
      );
    }

    const cache = new ResponseCache(config.cacheMb * 1024 * 1024);
    // A chain that went back may differ anywhere, even in blocks cached as final.
    for (const chain of chainList) chain.head?.onReset(() => cache.clear());
    const hub = new SubscriptionHub(logger, config.headPollMs, pending, config.limits.subscriptionsPerKey);
    cleanups.push(async () => hub.close());
    const metrics = new Metrics({ chains, store, cache, hub, deriver });
    const app = await buildApp({
      config,
      logger,
      store,
      chains,
      filters,
      logs,
      wallets,
      transactions,
      custody,
      signer: new SignerMethods({
        accounts: custody,
        pipeline,
        fees,
        idempotency,
        filters,
        nodeAccounts: config.custody.nodeAccounts && devnet !== undefined,
      }),
      cache,
      hub,
      metrics,
      operations,
      idempotency,
      keys,
      readiness,
      ...(devnet
        ? {
            embedded: (chainId: number) => {
              const node = devnet!.nodes.find((n) => n.chainId === chainId);
              return node && { status: node.status, restarts: node.restarts };
            },
          }
        : {}),
      limiters: {
        withKeys: new RateLimiter(config.rateLimits),
        withoutKeys: new RateLimiter(config.rateLimitsWithoutKeys),
      },
    });
    cleanups.push(async () => {
      // Stop accepting, let in-flight requests finish, but only for so long.
      const cut = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutMs);
      try {
        await app.close();
      } finally {
        clearTimeout(cut);
      }
    });
    let url = "";
    if (options.listen !== false) {
      url = await app.listen({ port: config.port, host: config.host });
    } else {
      await app.ready();
    }
    logger.info(
      { url, chains: chainList.map((c) => c.chainId), home: chains.homeChainId, store: store.kind },
      "chaingate ready",
    );
    return { app, wallets, pipeline, tracker, url, config, chains, store, devnet, system, relayer, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
