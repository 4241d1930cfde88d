/** Follows a chain's head block number by polling, so cached "latest" answers live at most one block. */
import type { Logger } from "pino";
import type { UpstreamPool } from "./upstream-pool.js";

export class HeadTracker {
  private current: number | undefined;
  private seenAt = 0;
  private timer: NodeJS.Timeout | undefined;
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
    this.seenAt = 0;
    void this.poll();
  }

  async poll(): Promise<void> {
    try {
      const result = await this.pool.call({ method: "eth_blockNumber", params: [] });
      this.observe(Number.parseInt(String(result).slice(2), 16));
    } catch (error) {
      this.logger.debug({ err: error, chainId: this.pool.chainId }, "head poll failed");
    }
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
