/**
 * The gateway's own view of pending transactions: every upstream's node filter is read, and each new
 * hash is recorded once in the store, in order of first sight. Pending filters and subscriptions
 * read from there, so neither a failover nor a restart nor another instance loses or repeats one.
 */
import type { Logger } from "pino";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { Store } from "../store/database.js";
import { fixedLimit } from "../store/fixed-limit.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { nodeReadOn } from "../upstream/node-reads.js";

export interface PendingPoolOptions {
  store: Store;
  chains: ChainRegistry;
  logger: Logger;
  pollMs: number;
  /** How long nodes are watched after the last install, poll or subscription, and hashes are kept. */
  retainMs: number;
  now?: () => number;
}

/**
 * Rows younger than this are not read yet: with PostgreSQL a sequence number taken earlier can
 * commit later, and a reader must not move its cursor past a row that is about to appear. SQLite
 * has one writer at a time, so its rows appear in sequence order.
 */
const SETTLE_MS = { postgres: 200, sqlite: 0 } as const;

export class PendingPool {
  private readonly now: () => number;
  /** Per chain: until when nodes are watched, and each upstream's node filter id. */
  private readonly watch = new Map<number, { until: number; filters: Map<string, string> }>();
  private readonly loop: BackgroundLoop;
  /**
   * When this process last recorded a hash (start counts: rows may be left from before a restart).
   * Once every row that could be is older than the retention, the sweep has nothing to delete and
   * stops asking the store every poll.
   */
  private lastRecorded: number;

  constructor(private readonly options: PendingPoolOptions) {
    this.now = options.now ?? Date.now;
    this.lastRecorded = this.now();
    this.loop = new BackgroundLoop({
      name: "pending transactions poll",
      everyMs: options.pollMs,
      firstAfterMs: options.pollMs,
      pass: () => this.poll(),
      logger: options.logger,
      unref: true,
    });
  }

  async start(): Promise<void> {
    // Pending filters that outlived a restart keep being fed.
    const rows = await this.options.store.db
      .selectFrom("filters")
      .select("chain_id")
      .where("kind", "=", "pending")
      .groupBy("chain_id")
      .execute();
    for (const row of rows) await this.activate(row.chain_id);
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /**
   * Someone wants pending hashes of this chain: watch its nodes for the retention time from now. On
   * first interest the node filters are installed before this returns, so nothing sent right after
   * a pending filter is made goes unseen.
   */
  async activate(chain: Chain | number): Promise<void> {
    const chainId = typeof chain === "number" ? chain : chain.chainId;
    const entry = this.watch.get(chainId) ?? { until: 0, filters: new Map() };
    const wasWatching = entry.until >= this.now();
    entry.until = this.now() + this.options.retainMs;
    this.watch.set(chainId, entry);
    if (!wasWatching && typeof chain !== "number") {
      await Promise.all(chain.pool.upstreams.map((u) => this.readUpstream(chain, entry.filters, u.label)));
    }
  }

  watching(chainId: number): boolean {
    return (this.watch.get(chainId)?.until ?? 0) >= this.now();
  }

  /** The newest sequence number of a chain: where a new pending filter starts. */
  async latest(chainId: number): Promise<number> {
    const row = await this.options.store.db
      .selectFrom("pending_transactions")
      .select((eb) => eb.fn.max("seq").as("seq"))
      .where("chain_id", "=", chainId)
      .executeTakeFirst();
    return Number(row?.seq ?? 0);
  }

  /** Hashes recorded after `after`, settled, in order; and the sequence number to continue from. */
  async read(chainId: number, after: number, limit = 10_000): Promise<{ hashes: string[]; last: number }> {
    const rows = await this.options.store.db
      .selectFrom("pending_transactions")
      .select(["seq", "hash"])
      .where("chain_id", "=", chainId)
      .where("seq", ">", after)
      .where("seen_at", "<=", this.now() - SETTLE_MS[this.options.store.kind])
      .orderBy("seq")
      .limit(fixedLimit(limit))
      .execute();
    return { hashes: rows.map((r) => r.hash), last: rows.at(-1)?.seq ?? after };
  }

  async record(chainId: number, hashes: readonly string[]): Promise<void> {
    if (hashes.length === 0) return;
    const now = this.now();
    this.lastRecorded = now;
    await this.options.store.db
      .insertInto("pending_transactions")
      .values(hashes.map((hash) => ({ chain_id: chainId, hash: hash.toLowerCase(), seen_at: now })))
      .onConflict((oc) => oc.columns(["chain_id", "hash"]).doNothing())
      .execute();
  }

  private async poll(): Promise<void> {
    const now = this.now();
    for (const chain of this.options.chains.all()) {
      const entry = this.watch.get(chain.chainId);
      if (!entry || entry.until < now) continue;
      const seen = await Promise.all(
        chain.pool.upstreams.map((u) => this.readUpstream(chain, entry.filters, u.label)),
      );
      await this.record(chain.chainId, [...new Set(seen.flat())]).catch((error: unknown) =>
        this.options.logger.warn({ err: error, chain: chain.chainId }, "recording pending hashes failed"),
      );
    }
    await this.sweep(now);
  }

  /** Deletes hashes past their retention, while there can be any (a margin of a few polls). */
  private async sweep(now: number): Promise<void> {
    if (now - this.lastRecorded > this.options.retainMs + 4 * this.options.pollMs) return;
    await this.options.store.db
      .deleteFrom("pending_transactions")
      .where("seen_at", "<", now - this.options.retainMs)
      .execute()
      .catch(() => {});
  }

  /** One upstream's new pending hashes; its node filter is installed (again) when it has none or lost it. */
  private async readUpstream(chain: Chain, filters: Map<string, string>, label: string): Promise<string[]> {
    try {
      const id = filters.get(label);
      if (id !== undefined) {
        try {
          const changes = await nodeReadOn(chain, label, "eth_getFilterChanges", [id]);
          return changes.filter((hash): hash is string => typeof hash === "string");
        } catch {
          filters.delete(label);
        }
      }
      filters.set(label, await nodeReadOn(chain, label, "eth_newPendingTransactionFilter", []));
      return [];
    } catch (error) {
      this.options.logger.debug({ err: error, upstream: label }, "pending-transaction read failed");
      return [];
    }
  }
}
