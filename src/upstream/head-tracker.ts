/** Follows a chain's head block number by polling, so cached "latest" answers live at most one block. */
import type { Logger } from "pino";
import type { UpstreamPool } from "./upstream-pool.js";

export class HeadTracker {
  private current: number | undefined;
  private seenAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** Transactions sent through chaingate on this chain (see refresh). */
  private sends = 0;
  private readonly listeners = new Set<(head: number) => void>();

  constructor(
    private readonly pool: UpstreamPool,
    readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** The latest head seen, or undefined before the first answer or when it is older than two intervals. */
  get head(): number | undefined {
    return Date.now() - this.seenAt <= 2 * this.intervalMs ? this.current : undefined;
  }

  onHead(listener: (head: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Records a head learnt elsewhere (an eth_blockNumber answer); only ever moves forward. */
  observe(head: number): void {
    this.seenAt = Date.now();
    if (this.current === undefined || head > this.current) {
      this.current = head;
      for (const listener of this.listeners) listener(head);
    }
  }

  /**
   * A transaction was just sent: the head may move any moment, so "latest" answers are not reused
   * until a fresh head is read.
   */
  refresh(): void {
    this.sends++;
    this.seenAt = 0;
    void this.poll();
  }

  /**
   * Reads the head. At most one read is in flight: a burst of sends costs one node call at a time,
   * not one each. A read that began before the latest send does not count as fresh; another follows.
   */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      for (;;) {
        const sendsBefore = this.sends;
        try {
          // Every upstream is asked: the pool learns each one's head (lag) and health from it.
          const head = await this.pool.pollHeads();
          if (sendsBefore === this.sends) {
            this.observe(head);
            return;
          }
        } catch (error) {
          this.logger.debug({ err: error, chainId: this.pool.chainId }, "head poll failed");
          return;
        }
      }
    })().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  start(): void {
    const loop = () => {
      void this.poll().finally(() => {
        if (this.timer !== undefined) this.timer = setTimeout(loop, this.intervalMs).unref();
      });
    };
    this.timer = setTimeout(loop, 0).unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
