/** Follows a chain's head block number by polling, so cached "latest" answers live at most one block. */
import type { Logger } from "pino";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { ClusterBus } from "../store/cluster-bus.js";
import type { UpstreamPool } from "./upstream-pool.js";

/** How long after a send the head is read again (the sends in between share the read). */
export const REFRESH_AFTER_MS = 25;

export class HeadTracker {
  private current: number | undefined;
  private seenAt = 0;
  private readonly loop: BackgroundLoop;
  private polling: Promise<void> | undefined;
  /** Transactions sent through chaingate on this chain (see refresh). */
  private sends = 0;
  /** `sends` as of the last head read that began after them: while lower, no head counts as fresh. */
  private sendsSeen = 0;
  private readonly listeners = new Set<(head: number) => void>();
  private readonly resetListeners = new Set<(reason: string) => void>();
  /** A head read after sends, not yet made (see refresh). */
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** The last poll found no upstream answering. */
  private down = false;
  /** After stop: no read is armed any more. */
  private stopped = false;

  constructor(
    private readonly pool: UpstreamPool,
    readonly intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.loop = new BackgroundLoop({
      name: "head poll",
      everyMs: intervalMs,
      pass: () => this.poll(),
      logger,
      unref: true,
    });
  }

  /** The latest head seen, or undefined before the first answer or when it is older than two intervals. */
  get head(): number | undefined {
    return Date.now() - this.seenAt <= 2 * this.intervalMs ? this.current : undefined;
  }

  onHead(listener: (head: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Called when the chain may have lost state: it answers again after no upstream did (a node
   * restart), or its head went back (a node restored from older state, a deep reorg).
   */
  onReset(listener: (reason: string) => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  private reset(reason: string): void {
    this.logger.warn({ chainId: this.pool.chainId, reason }, "chain may have lost state; reconciling");
    for (const listener of this.resetListeners) listener(reason);
  }

  /** The highest head known, fresh or not (what no answer may go below). */
  get highest(): number | undefined {
    return this.current;
  }

  /**
   * Shares heads with the other instances on the store: each new head this tracker learns is
   * published, and the heads they publish are observed here, so no instance behind a balancer
   * answers below a head another has served.
   */
  shareThrough(bus: ClusterBus, chainId: number): () => void {
    let published = this.current ?? -1;
    const stopListening = bus.on("head", (event) => {
      if (event.chainId !== chainId) return;
      if (event.head > published) published = event.head;
      this.observe(event.head);
    });
    const stopPublishing = this.onHead((head) => {
      if (head <= published) return;
      published = head;
      void bus.publish({ kind: "head", chainId, head }).catch(() => {
        // The store is unreachable: this instance still serves its own heads.
      });
    });
    return () => {
      stopListening();
      stopPublishing();
    };
  }

  /**
   * Records a head learnt elsewhere (an eth_blockNumber answer, a receipt, a pushed head); only ever
   * moves forward. After a send it does not make the head fresh again: an answer to a read that
   * began before the send (or a block pushed before it was mined) would bring back the head the
   * send left behind; only a poll that began after it does (see poll).
   */
  observe(head: number): void {
    if (this.sendsSeen === this.sends) this.seenAt = Date.now();
    if (this.current === undefined || head > this.current) {
      this.current = head;
      for (const listener of this.listeners) listener(head);
    }
  }

  /**
   * A transaction was just sent: the head may move any moment, so "latest" answers are not reused
   * until a fresh head is read. The read is made REFRESH_AFTER_MS later, once for every send in
   * between: a client sending one transaction at a time paid a head read per send.
   */
  refresh(): void {
    this.sends++;
    this.seenAt = 0;
    this.readLater();
  }

  /** Arms the one head read REFRESH_AFTER_MS from now, unless one is armed already. */
  private readLater(): void {
    if (this.refreshTimer !== undefined || this.stopped) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.poll();
    }, REFRESH_AFTER_MS);
    this.refreshTimer.unref();
  }

  /**
   * Reads the head. At most one read is in flight: a burst of sends costs one node call at a time,
   * not one each. A read that began before the latest send does not count as fresh; the next one
   * is made REFRESH_AFTER_MS later, not at once: under a steady stream of sends every read ends
   * after another send, and reading again at once was a head read per send or two.
   */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      const sendsBefore = this.sends;
      try {
        // Every upstream is asked: the pool learns each one's head (lag) and health from it.
        const head = await this.pool.pollHeads();
        if (this.down) {
          this.down = false;
          this.reset("upstreams answer again after an outage");
        }
        if (this.current !== undefined && head < this.current) {
          const from = this.current;
          this.current = head;
          this.seenAt = Date.now();
          this.reset(`head went back from ${from} to ${head}`);
        }
        if (sendsBefore === this.sends) {
          this.sendsSeen = sendsBefore;
          this.observe(head);
        } else {
          this.readLater();
        }
      } catch (error) {
        this.down = true;
        this.logger.debug({ err: error, chainId: this.pool.chainId }, "head poll failed");
      }
    })().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  start(): void {
    this.stopped = false;
    this.loop.start();
  }

  /** No poll starts after this (one running is left to end: it only reads). */
  stop(): void {
    this.stopped = true;
    if (this.refreshTimer !== undefined) clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
    void this.loop.stop();
  }
}
