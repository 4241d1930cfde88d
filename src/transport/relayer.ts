/** The relayer: each pass scans every chain's endpoint, then delivers what is due and refunds what was refused. */
import type { Logger } from "pino";
import type { SystemContracts } from "../contracts/system-contracts.js";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { Store } from "../store/database.js";
import { transportSource } from "../tx/transaction-lookup.js";
import type { TransactionPipeline } from "../tx/transaction-pipeline.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import type { ChainTrust } from "../upstream/chain-trust.js";
import { Delivery } from "./delivery.js";
import type { LaneLimits } from "./lane-limits.js";
import { Refund } from "./refund.js";
import { SourceGate } from "./source-gate.js";
import { SourceScanner } from "./source-scanner.js";
import { TransportRecords } from "./transport-records.js";

/** A transport's lease: renewed while its work runs, so a killed instance's transports are taken over within this. */
export const RELAYER_LEASE_MS = 4_500;

export interface RelayerOptions {
  store: Store;
  chains: ChainRegistry;
  pipeline: TransactionPipeline;
  system: SystemContracts;
  logger: Logger;
  intervalMs: number;
  /** Each source chain's finality rule and upstream quorum. */
  trust: (chainId: number) => ChainTrust;
  /** Per-lane limits (set by admins through the same store). */
  lanes: LaneLimits;
  leaseMs?: number;
  maxAttempts?: number;
  now?: () => number;
}

export class Relayer {
  private readonly records: TransportRecords;
  private readonly scanner: SourceScanner;
  private readonly delivery: Delivery;
  private readonly refunds: Refund;
  private readonly loop: BackgroundLoop;

  constructor(private readonly options: RelayerOptions) {
    const now = options.now ?? Date.now;
    const { store, chains, pipeline, system, logger } = options;
    this.loop = new BackgroundLoop({
      name: "relayer pass",
      everyMs: options.intervalMs,
      firstAfterMs: "now",
      pass: () => this.tick(),
      logger,
    });
    this.records = new TransportRecords(store, logger, options.leaseMs ?? RELAYER_LEASE_MS, now);
    this.scanner = new SourceScanner({
      store,
      records: this.records,
      endpoint: system.endpoint,
      trust: options.trust,
      now,
    });
    const gate = new SourceGate({
      chains,
      endpoint: system.endpoint,
      trust: options.trust,
      lanes: options.lanes,
      records: this.records,
      logger,
      now,
    });
    this.delivery = new Delivery({
      store,
      chains,
      pipeline,
      system,
      records: this.records,
      gate,
      maxAttempts: options.maxAttempts ?? 5,
    });
    this.refunds = new Refund({
      chains,
      pipeline,
      system,
      records: this.records,
      delivery: this.delivery,
      logger,
    });
  }

  /** Passes run one after another (the next is scheduled when one ends), never two at once. */
  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One pass: scan every chain, then deliver what is due. Errors are logged; the next pass retries. */
  async tick(): Promise<void> {
    await this.scan();
    await this.work();
  }

  /** Records the transports every chain's endpoint shows up to its final block. */
  async scan(): Promise<void> {
    const { logger } = this.options;
    for (const chain of this.options.chains.all()) {
      try {
        await this.scanner.scan(chain);
      } catch (error) {
        logger.warn({ err: error, chain: chain.chainId }, "relayer scan failed; will retry");
      }
    }
  }

  /** Delivers what is due (each checked against its source chain first) and refunds what was refused. */
  async work(): Promise<void> {
    const { logger } = this.options;
    try {
      await this.checkSources();
      for (const row of await this.records.due("deliver")) {
        await this.records.underLease(
          row.id,
          () => this.delivery.deliver(row),
          async (error) => {
            logger.warn({ err: error, transport: row.id }, "delivery attempt failed; will retry");
            await this.records.note(row.id, { error: (error as Error).message.slice(0, 500) });
          },
        );
      }
      for (const row of await this.records.due("refund")) {
        await this.records.underLease(
          row.id,
          () => this.refunds.refund(row),
          async (error) =>
            logger.warn({ err: error, transport: row.id }, "refund attempt failed; will retry"),
        );
      }
    } catch (error) {
      logger.warn({ err: error }, "relayer pass failed; will retry");
    }
  }

  /** A transport whose source transaction failed will never be seen on chain: it fails with the reason. */
  private async checkSources(): Promise<void> {
    for (const row of await this.records.awaitingSource()) {
      const final = await transportSource(this.options.store, row.id, row.source_tx_hash!);
      if (final && (final.state === "failed" || final.state === "dropped")) {
        await this.records.fail(
          row.id,
          `source transaction ${final.tx_hash} ${final.state}: ${final.error ?? "no reason given"}`,
        );
      }
    }
  }
}
