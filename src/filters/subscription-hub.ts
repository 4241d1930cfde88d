/** eth_subscribe served by the gateway: newHeads and logs from its own head tracker, pending hashes from its pending pool. */
import type { Logger } from "pino";
import type { Chain } from "../upstream/chain-registry.js";
import { type LogCriteria, matchPart, toHex } from "./filter-criteria.js";
import type { PendingPool } from "./pending-pool.js";
import { randomQuantityId } from "./random-id.js";

export type SubscriptionKind = "newHeads" | "logs" | "newPendingTransactions";

interface Subscription {
  id: string;
  chain: Chain;
  kind: SubscriptionKind;
  criteria: LogCriteria;
  send: (result: unknown) => void;
  /** Logs sent lately, by block number, to be taken back (removed: true) if a reorg replaces their block. */
  sentLogs: Map<number, Record<string, unknown>[]>;
}

interface ChainFeed {
  /** Last block delivered to subscribers; each later block is delivered once, in order. */
  delivered: number | undefined;
  /** Serialises deliveries so a slow fetch never reorders blocks. */
  queue: Promise<void>;
  unlisten: () => void;
  pendingTimer: NodeJS.Timeout | undefined;
  /** Position in the pending pool; undefined until the first read sets it to "now". */
  pendingCursor: number | undefined;
  /** Hashes of the blocks delivered lately, by number: how a reorg is noticed. */
  hashes: Map<number, string>;
}

/** Most blocks delivered after one head change; a subscriber far behind resumes from the head. */
const MAX_CATCH_UP = 128;

export class SubscriptionHub {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly feeds = new Map<number, ChainFeed>();

  constructor(
    private readonly logger: Logger,
    private readonly pendingPollMs: number,
    private readonly pending: PendingPool,
  ) {}

  get size(): number {
    return this.subscriptions.size;
  }

  subscribe(
    chain: Chain,
    kind: SubscriptionKind,
    criteria: LogCriteria,
    send: (result: unknown) => void,
  ): string {
    const id = randomQuantityId();
    this.subscriptions.set(id, { id, chain, kind, criteria, send, sentLogs: new Map() });
    this.feed(chain, kind);
    return id;
  }

  unsubscribe(id: string): boolean {
    const sub = this.subscriptions.get(id.toLowerCase());
    if (!sub) return false;
    this.subscriptions.delete(sub.id);
    const left = [...this.subscriptions.values()].filter((s) => s.chain.chainId === sub.chain.chainId);
    const feed = this.feeds.get(sub.chain.chainId);
    if (feed && !left.some((s) => s.kind === "newPendingTransactions")) {
      clearInterval(feed.pendingTimer);
      feed.pendingTimer = undefined;
    }
    if (feed && left.length === 0) {
      feed.unlisten();
      this.feeds.delete(sub.chain.chainId);
    }
    return true;
  }

  close(): void {
    for (const id of [...this.subscriptions.keys()]) this.unsubscribe(id);
  }

  private feed(chain: Chain, kind: SubscriptionKind): void {
    let feed = this.feeds.get(chain.chainId);
    if (!feed) {
      const created: ChainFeed = {
        delivered: chain.head?.head,
        queue: Promise.resolve(),
        unlisten: () => {},
        pendingTimer: undefined,
        pendingCursor: undefined,
        hashes: new Map(),
      };
      created.unlisten =
        chain.head?.onHead((head) => {
          created.queue = created.queue.then(() => this.deliver(chain, created, head));
        }) ?? (() => {});
      this.feeds.set(chain.chainId, created);
      feed = created;
    }
    if (kind === "newPendingTransactions" && !feed.pendingTimer) {
      const active = feed;
      active.pendingTimer = setInterval(() => void this.pollPending(chain, active), this.pendingPollMs);
      active.pendingTimer.unref();
      void this.pollPending(chain, active);
    }
  }

  private listeners(chain: Chain, kind: SubscriptionKind): Subscription[] {
    return [...this.subscriptions.values()].filter(
      (s) => s.chain.chainId === chain.chainId && s.kind === kind,
    );
  }

  private async deliver(chain: Chain, feed: ChainFeed, head: number): Promise<void> {
    try {
      const base = await this.rewind(chain, feed);
      const from = base === undefined ? head : Math.max(base + 1, head - MAX_CATCH_UP + 1);
      if (from > head) return;
      const heads = this.listeners(chain, "newHeads");
      const logSubs = this.listeners(chain, "logs");
      const headers: Record<string, unknown>[] = [];
      // Headers are read when someone wants them; otherwise only the head's hash (to notice reorgs).
      for (let n = heads.length > 0 ? from : head; n <= head; n++) {
        const block = (await chain.pool.call({
          method: "eth_getBlockByNumber",
          params: [toHex(n), false],
        })) as (Record<string, unknown> & { transactions?: unknown; hash: string }) | null;
        if (!block) continue;
        const { transactions: _omitted, ...header } = block;
        headers.push(header);
        feed.hashes.set(n, block.hash);
      }
      const logsBySub = await Promise.all(
        logSubs.map(
          async (sub) =>
            (await chain.pool.call({
              method: "eth_getLogs",
              params: [{ ...matchPart(sub.criteria), fromBlock: toHex(from), toBlock: toHex(head) }],
            })) as (Record<string, unknown> & { blockNumber: string; blockHash: string })[],
        ),
      );
      for (const header of headers) for (const sub of heads) sub.send(header);
      logSubs.forEach((sub, i) => {
        for (const log of logsBySub[i]!) {
          const n = Number.parseInt(log.blockNumber, 16);
          const sent = sub.sentLogs.get(n) ?? [];
          sent.push(log);
          sub.sentLogs.set(n, sent);
          feed.hashes.set(n, log.blockHash);
          sub.send(log);
        }
        for (const n of sub.sentLogs.keys()) if (n <= head - MAX_CATCH_UP) sub.sentLogs.delete(n);
      });
      for (const n of feed.hashes.keys()) if (n <= head - MAX_CATCH_UP) feed.hashes.delete(n);
      feed.delivered = head;
    } catch (error) {
      // Not advanced: the next head change delivers this range again from where it stopped.
      this.logger.warn({ err: error, chainId: chain.chainId }, "subscription delivery failed; will retry");
    }
  }

  /**
   * The last block delivered, or, when a reorg replaced it, the newest remembered block still
   * canonical; logs sent from the replaced blocks are sent again with `removed: true`.
   */
  private async rewind(chain: Chain, feed: ChainFeed): Promise<number | undefined> {
    const delivered = feed.delivered;
    if (delivered === undefined) return undefined;
    const known = feed.hashes.get(delivered);
    if (known === undefined || (await this.hashAt(chain, delivered)) === known) return delivered;
    const numbers = [...feed.hashes.keys()].sort((a, b) => b - a);
    let base = Math.min(...numbers) - 1;
    for (const n of numbers) {
      if ((await this.hashAt(chain, n)) === feed.hashes.get(n)) {
        base = n;
        break;
      }
      feed.hashes.delete(n);
    }
    for (const sub of this.listeners(chain, "logs")) {
      const replaced = [...sub.sentLogs.keys()].filter((n) => n > base).sort((a, b) => a - b);
      for (const n of replaced) {
        for (const log of sub.sentLogs.get(n)!) sub.send({ ...log, removed: true });
        sub.sentLogs.delete(n);
      }
    }
    return base;
  }

  private async hashAt(chain: Chain, n: number): Promise<string | null> {
    const block = (await chain.pool.call({ method: "eth_getBlockByNumber", params: [toHex(n), false] })) as {
      hash: string;
    } | null;
    return block?.hash ?? null;
  }

  private async pollPending(chain: Chain, feed: ChainFeed): Promise<void> {
    try {
      await this.pending.activate(chain);
      if (feed.pendingCursor === undefined) {
        feed.pendingCursor = await this.pending.latest(chain.chainId);
        return;
      }
      const { hashes, last } = await this.pending.read(chain.chainId, feed.pendingCursor);
      feed.pendingCursor = last;
      for (const sub of this.listeners(chain, "newPendingTransactions"))
        for (const hash of hashes) sub.send(hash);
    } catch (error) {
      // The store or the nodes did not answer: the next poll tries again from the same place.
      this.logger.debug({ err: error, chainId: chain.chainId }, "pending-transaction poll failed");
    }
  }
}
