/** Starts a whole chaingate: embedded chains or upstream pools, the store, the app; and stops it all again. */
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { type Logger, pino } from "pino";
import { buildApp } from "./app.js";
import type { Config } from "./config/config.js";
import { type Devnet, startDevnet } from "./devnet/devnet.js";
import { devnetFunder } from "./devnet/fund-addresses.js";
import { ChaingateError } from "./errors/chaingate-error.js";
import { FilterService } from "./filters/filter-service.js";
import { SubscriptionHub } from "./filters/subscription-hub.js";
import { KeyDeriver } from "./keys/kdf.js";
import { UnlockCache } from "./keys/unlock-cache.js";
import { Metrics } from "./metrics/metrics.js";
import { openStore, type Store } from "./store/database.js";
import { FeeOracle } from "./tx/fee-oracle.js";
import { IdempotencyStore } from "./tx/idempotency.js";
import { NonceLedger } from "./tx/nonce-ledger.js";
import { SignerRegistry } from "./tx/signer-registry.js";
import { TransactionPipeline } from "./tx/transaction-pipeline.js";
import { TransactionService } from "./tx/transaction-service.js";
import { TransactionTracker } from "./tx/transaction-tracker.js";
import { type Chain, ChainRegistry } from "./upstream/chain-registry.js";
import { HeadTracker } from "./upstream/head-tracker.js";
import { ResponseCache } from "./upstream/response-cache.js";
import { UpstreamPool } from "./upstream/upstream-pool.js";
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
  stop(): Promise<void>;
}

export interface RuntimeOptions {
  logger?: Logger;
  /** Skip listening on a port (tests that use inject()). */
  listen?: boolean;
}

/** Asks every upstream of a chain for its chain id; they must agree with each other and the config. */
async function resolveChain(
  entry: { chainId?: number | undefined; name?: string | undefined; urls: string[] },
  timeoutMs: number,
  headPollMs: number,
  logger: Logger,
): Promise<Chain> {
  const provisional = new UpstreamPool(entry.chainId ?? 0, entry.urls, timeoutMs);
  const ids = await Promise.all(
    provisional.upstreams.map(async (u) => {
      try {
        return Number(BigInt(String(await u.call({ method: "eth_chainId", params: [] }))));
      } catch (error) {
        throw new ChaingateError(
          `upstream ${u.label} did not answer eth_chainId: ${(error as Error).message}`,
          {
            code: "UPSTREAM_UNAVAILABLE",
            retryable: true,
            cause: error,
          },
        );
      }
    }),
  );
  await provisional.close();
  const distinct = [...new Set(ids)];
  if (distinct.length !== 1 || (entry.chainId !== undefined && distinct[0] !== entry.chainId)) {
    throw new ChaingateError(
      `upstreams of chain ${entry.chainId ?? "(unnamed)"} report chain ids ${ids.join(", ")}`,
      { code: "CHAIN_ID_MISMATCH" },
    );
  }
  const chainId = distinct[0]!;
  const pool = new UpstreamPool(chainId, entry.urls, timeoutMs);
  return {
    chainId,
    name: entry.name ?? `chain-${chainId}`,
    pool,
    head: new HeadTracker(pool, headPollMs, logger),
  };
}

export async function startChaingate(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? pino({ level: config.logLevel });
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
    let devnet: Devnet | undefined;
    let entries: { chainId?: number; name?: string; urls: string[] }[];
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
      }));
    }
    const chainList = await Promise.all(
      entries.map((e) => resolveChain(e, config.upstreamTimeoutMs, config.headPollMs, logger)),
    );
    cleanups.push(async () => {
      await Promise.all(chainList.map((c) => c.pool.close()));
    });
    for (const chain of chainList) chain.head?.start();
    cleanups.push(async () => {
      for (const chain of chainList) chain.head?.stop();
    });
    const ids = chainList.map((c) => c.chainId);
    if (new Set(ids).size !== ids.length) {
      throw new ChaingateError(`two configured chains are the same chain (ids ${ids.join(", ")})`, {
        code: "CHAIN_ID_MISMATCH",
      });
    }
    const chains = new ChainRegistry(chainList, config.homeChainId ?? chainList[0]!.chainId);

    const store = await openStore(
      config.databaseUrl
        ? { kind: "postgres", url: config.databaseUrl }
        : { kind: "sqlite", path: join(config.dataDir, "chaingate.sqlite") },
    );
    cleanups.push(() => store.close());

    const filters = new FilterService({ store, idleMs: config.filterIdleSeconds * 1000 });
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
    const transactions = new TransactionService({
      wallets,
      chains,
      pipeline,
      idempotency: new IdempotencyStore(store),
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
    });
    // Started before the app answers: stored but unsent transactions (a crash) go out at once.
    tracker.start();
    cleanups.push(() => tracker.stop());

    const cache = new ResponseCache(config.cacheMb * 1024 * 1024);
    const hub = new SubscriptionHub(logger, config.headPollMs);
    cleanups.push(async () => hub.close());
    const metrics = new Metrics({ chains, store, cache, hub, deriver });
    const app = await buildApp({
      config,
      logger,
      store,
      chains,
      filters,
      wallets,
      transactions,
      cache,
      hub,
      metrics,
    });
    cleanups.push(() => app.close());
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
    return { app, wallets, pipeline, tracker, url, config, chains, store, devnet, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
