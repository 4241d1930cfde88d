/** eth_subscribe served by the gateway: newHeads and logs from its own head tracker, pending hashes from its pending pool. */
import type { Logger } from "pino";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { Chain } from "../upstream/chain-registry.js";
import { blockHashAt, nodeRead } from "../upstream/node-reads.js";
import { canonicalBase } from "./canonical-base.js";
import { type LogCriteria, logMatches, toHex } from "./filter-criteria.js";
import { limitExceeded } from "./log-query.js";
import type { PendingPool } from "./pending-pool.js";
import { randomQuantityId } from "./random-id.js";

export type SubscriptionKind = "newHeads" | "logs" | "newPendingTransactions";

type Log = Record<string, unknown> & {
  blockNumber: string;
  blockHash: string;
  address?: string;
  topics?: string[];
};

interface Subscription {
  id: string;
  chain: Chain;
  kind: SubscriptionKind;
  criteria: LogCriteria;
  tenant: string;
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
  /** Polls the pending pool while the chain has pending subscriptions: one poll at a time, so no hash is sent twice. */
  pendingLoop: BackgroundLoop | undefined;
  /** Position in the pending pool; undefined until the first read sets it to "now". */
  pendingCursor: number | undefined;
  /** Hashes of the blocks delivered lately, by number: how a reorg is noticed. */
  hashes: Map<number, string>;
  /** This chain's subscriptions by kind: adding and removing one is O(1). */
  subs: Record<SubscriptionKind, Set<Subscription>>;
}

/** At most this many distinct addresses are asked of the node by name; beyond, every log of the block. */
const MAX_NAMED_ADDRESSES = 1_000;

/** Most blocks delivered after one head change; a subscriber far behind resumes from the head. */
const MAX_CATCH_UP = 128;

export class SubscriptionHub {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly feeds = new Map<number, ChainFeed>();
  private readonly perTenant = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    private readonly pendingPollMs: number,
    private readonly pending: PendingPool,
    /** Subscriptions one tenant may hold over all its sockets. */
    private readonly maxPerTenant: number = Number.POSITIVE_INFINITY,
    /** This instance's share of the per-tenant cap (the cap holds for every instance on the store). */
    private readonly share: (cap: number) => number = (cap) => cap,
  ) {}

  get size(): number {
    return this.subscriptions.size;
  }

  subscribe(
    chain: Chain,
    kind: SubscriptionKind,
    criteria: LogCriteria,
    send: (result: unknown) => void,
    tenant = "",
  ): string {
    const held = this.perTenant.get(tenant) ?? 0;
    const cap = this.share(this.maxPerTenant);
    if (held >= cap) {
      throw limitExceeded(
        "SUBSCRIPTION_LIMIT",
        `too many subscriptions: at most ${this.maxPerTenant} per API key over all its connections${cap < this.maxPerTenant ? ` (${cap} on each of the instances sharing the store)` : ""}`,
      );
    }
    const id = randomQuantityId();
    const sub: Subscription = { id, chain, kind, criteria, tenant, send, sentLogs: new Map() };
    this.subscriptions.set(id, sub);
    this.perTenant.set(tenant, held + 1);
    this.feed(chain, kind).subs[kind].add(sub);
    return id;
  }

  unsubscribe(id: string): boolean {
    const sub = this.subscriptions.get(id.toLowerCase());
    if (!sub) return false;
    this.subscriptions.delete(sub.id);
    const held = (this.perTenant.get(sub.tenant) ?? 1) - 1;
    if (held <= 0) this.perTenant.delete(sub.tenant);
    else this.perTenant.set(sub.tenant, held);
    const feed = this.feeds.get(sub.chain.chainId);
    if (!feed) return true;
    feed.subs[sub.kind].delete(sub);
    if (feed.subs.newPendingTransactions.size === 0) {
      void feed.pendingLoop?.stop();
      feed.pendingLoop = undefined;
    }
    if (feed.subs.newHeads.size + feed.subs.logs.size + feed.subs.newPendingTransactions.size === 0) {
      feed.unlisten();
      this.feeds.delete(sub.chain.chainId);
    }
    return true;
  }

  close(): void {
    for (const id of [...this.subscriptions.keys()]) this.unsubscribe(id);
  }

  private feed(chain: Chain, kind: SubscriptionKind): ChainFeed {
    let feed = this.feeds.get(chain.chainId);
    if (!feed) {
      const created: ChainFeed = {
        delivered: chain.head?.head,
        queue: Promise.resolve(),
        unlisten: () => {},
        pendingLoop: undefined,
        pendingCursor: undefined,
        hashes: new Map(),
        subs: { newHeads: new Set(), logs: new Set(), newPendingTransactions: new Set() },
      };
      created.unlisten =
        chain.head?.onHead((head) => {
          created.queue = created.queue.then(() => this.deliver(chain, created, head));
        }) ?? (() => {});
      this.feeds.set(chain.chainId, created);
      feed = created;
    }
    if (kind === "newPendingTransactions" && !feed.pendingLoop) {
      const active = feed;
      // The first poll begins at once: it takes the cursor the subscription's hashes start after.
      active.pendingLoop = new BackgroundLoop({
        name: "pending subscription poll",
        everyMs: this.pendingPollMs,
        firstAfterMs: "now",
        pass: () => this.pollPending(chain, active),
        logger: this.logger,
        unref: true,
      });
      active.pendingLoop.start();
    }
    return feed;
  }

  private listeners(chain: Chain, kind: SubscriptionKind): Subscription[] {
    const feed = this.feeds.get(chain.chainId);
    return feed ? [...feed.subs[kind]] : [];
  }

  /**
   * Every logs subscription's logs of [from, to] from one node call, matched here: the cost of a
   * block is one eth_getLogs however many subscriptions there are.
   */
  private async logsFor(chain: Chain, subs: Subscription[], from: number, to: number): Promise<Log[][]> {
    if (subs.length === 0) return [];
    const named = new Set<string>();
    let everyAddress = false;
    for (const sub of subs) {
      const address = sub.criteria.address;
      if (address === undefined) everyAddress = true;
      else for (const a of [address].flat()) named.add(a.toLowerCase());
    }
    const narrow = !everyAddress && named.size <= MAX_NAMED_ADDRESSES;
    const logs = await nodeRead(chain, "eth_getLogs", [
      { ...(narrow ? { address: [...named] } : {}), fromBlock: toHex(from), toBlock: toHex(to) },
    ]);
    return subs.map((sub) => logs.filter((log) => logMatches(sub.criteria, log)));
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
        const block = await nodeRead(chain, "eth_getBlockByNumber", [toHex(n), false]);
        if (!block?.hash) continue;
        const { transactions: _omitted, ...header } = block;
        headers.push(header);
        feed.hashes.set(n, block.hash);
      }
      const logsBySub = await this.logsFor(chain, logSubs, from, head);
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
    if (known === undefined || (await blockHashAt(chain, delivered)) === known) return delivered;
    const remembered = [...feed.hashes].map(([n, h]) => ({ n, h }));
    const { base, replaced: gone } = await canonicalBase(
      remembered,
      (n) => blockHashAt(chain, n),
      delivered - 1,
    );
    for (const block of gone) feed.hashes.delete(block.n);
    for (const sub of this.listeners(chain, "logs")) {
      const replaced = [...sub.sentLogs.keys()].filter((n) => n > base).sort((a, b) => a - b);
      for (const n of replaced) {
        for (const log of sub.sentLogs.get(n)!) sub.send({ ...log, removed: true });
        sub.sentLogs.delete(n);
      }
    }
    return base;
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
