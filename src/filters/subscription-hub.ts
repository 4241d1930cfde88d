/** eth_subscribe served by the gateway: newHeads and logs from its own head tracker, pending hashes from a node filter. */
import type { Logger } from "pino";
import type { Chain } from "../upstream/chain-registry.js";
import { type LogCriteria, matchPart, toHex } from "./filter-criteria.js";
import {
  installNodePendingFilter,
  type NodeFilterRef,
  readNodePendingFilter,
} from "./node-pending-filter.js";
import { randomQuantityId } from "./random-id.js";

export type SubscriptionKind = "newHeads" | "logs" | "newPendingTransactions";

interface Subscription {
  id: string;
  chain: Chain;
  kind: SubscriptionKind;
  criteria: LogCriteria;
  send: (result: unknown) => void;
}

interface ChainFeed {
  /** Last block delivered to subscribers; each later block is delivered once, in order. */
  delivered: number | undefined;
  /** Serialises deliveries so a slow fetch never reorders blocks. */
  queue: Promise<void>;
  unlisten: () => void;
  pendingTimer: NodeJS.Timeout | undefined;
  pendingFilter: NodeFilterRef | undefined;
}

/** Most blocks delivered after one head change; a subscriber far behind resumes from the head. */
const MAX_CATCH_UP = 128;

export class SubscriptionHub {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly feeds = new Map<number, ChainFeed>();

  constructor(
    private readonly logger: Logger,
    private readonly pendingPollMs: number,
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
    this.subscriptions.set(id, { id, chain, kind, criteria, send });
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
        pendingFilter: undefined,
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
    }
  }

  private listeners(chain: Chain, kind: SubscriptionKind): Subscription[] {
    return [...this.subscriptions.values()].filter(
      (s) => s.chain.chainId === chain.chainId && s.kind === kind,
    );
  }

  private async deliver(chain: Chain, feed: ChainFeed, head: number): Promise<void> {
    const from = feed.delivered === undefined ? head : Math.max(feed.delivered + 1, head - MAX_CATCH_UP + 1);
    if (from > head) return;
    try {
      const heads = this.listeners(chain, "newHeads");
      if (heads.length > 0) {
        for (let n = from; n <= head; n++) {
          const block = (await chain.pool.call({
            method: "eth_getBlockByNumber",
            params: [toHex(n), false],
          })) as (Record<string, unknown> & { transactions?: unknown }) | null;
          if (!block) continue;
          const { transactions: _omitted, ...header } = block;
          for (const sub of heads) sub.send(header);
        }
      }
      for (const sub of this.listeners(chain, "logs")) {
        const logs = (await chain.pool.call({
          method: "eth_getLogs",
          params: [{ ...matchPart(sub.criteria), fromBlock: toHex(from), toBlock: toHex(head) }],
        })) as unknown[];
        for (const log of logs) sub.send(log);
      }
      feed.delivered = head;
    } catch (error) {
      // Not advanced: the next head change delivers this range again from where it stopped.
      this.logger.warn({ err: error, chainId: chain.chainId }, "subscription delivery failed; will retry");
    }
  }

  private async pollPending(chain: Chain, feed: ChainFeed): Promise<void> {
    try {
      if (feed.pendingFilter === undefined) {
        feed.pendingFilter = await installNodePendingFilter(chain);
        return;
      }
      const { hashes, ref } = await readNodePendingFilter(chain, feed.pendingFilter);
      feed.pendingFilter = ref;
      for (const sub of this.listeners(chain, "newPendingTransactions"))
        for (const hash of hashes) sub.send(hash);
    } catch (error) {
      // No node answered: the next poll tries again.
      this.logger.debug({ err: error, chainId: chain.chainId }, "pending-transaction poll failed");
    }
  }
}
