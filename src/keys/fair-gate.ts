/** A counting semaphore that serves tenants in turn (round robin) and bounds what each, and all, may queue. */
import { ChaingateError } from "../errors/chaingate-error.js";
import type { ErrorCode } from "../errors/codes.js";

export interface FairGateLimits {
  /** What the gate guards, for its refusals: "key derivations", "node calls". */
  what?: string;
  /** The code of its refusals (default KDF_BUSY). */
  code?: Extract<ErrorCode, "KDF_BUSY" | "UPSTREAM_BUSY">;
  /** Tasks running at once. */
  permits: number;
  /** Tasks one tenant may have running or waiting. */
  perTenant: number;
  /** Tasks waiting in all. */
  queue: number;
}

export class FairGate {
  private active = 0;
  /** Waiting tasks by tenant; the map's order is the turn order. */
  private readonly queues = new Map<string, (() => void)[]>();
  private readonly held = new Map<string, number>();
  /** Tasks running now, by tenant: the next permit goes to a waiting tenant with the fewest. */
  private readonly running = new Map<string, number>();
  private queued = 0;

  constructor(private readonly limits: FairGateLimits) {}

  get waiting(): number {
    return this.queued;
  }

  /** `tenant` "" is the single user of the keyless mode: only the overall queue bounds it. */
  async run<T>(tenant: string, task: () => Promise<T>): Promise<T> {
    const held = this.held.get(tenant) ?? 0;
    if (tenant !== "" && held >= this.limits.perTenant) {
      throw new ChaingateError(
        `too many ${this.limits.what ?? "key derivations"} in progress for this API key (at most ${this.limits.perTenant}); retry in a moment`,
        {
          code: this.limits.code ?? "KDF_BUSY",
          data: { retry_after_seconds: 1 },
        },
      );
    }
    if (this.active >= this.limits.permits && this.queued >= this.limits.queue) {
      throw new ChaingateError(
        `the queue of ${this.limits.what ?? "key derivations"} is full; retry in a moment`,
        {
          code: this.limits.code ?? "KDF_BUSY",
          // The code's second status: not this tenant's share but everyone's queue is full.
          status: 503,
          data: { retry_after_seconds: 1 },
        },
      );
    }
    this.held.set(tenant, held + 1);
    try {
      if (this.active >= this.limits.permits) {
        this.queued++;
        await new Promise<void>((resolve) => {
          const queue = this.queues.get(tenant);
          if (queue) queue.push(resolve);
          else this.queues.set(tenant, [resolve]);
        });
      } else this.active++;
      this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
      try {
        return await task();
      } finally {
        const running = (this.running.get(tenant) ?? 1) - 1;
        if (running === 0) this.running.delete(tenant);
        else this.running.set(tenant, running);
        this.next();
      }
    } finally {
      const left = (this.held.get(tenant) ?? 1) - 1;
      if (left === 0) this.held.delete(tenant);
      else this.held.set(tenant, left);
    }
  }

  /**
   * The permit passes to the first waiting task of the waiting tenant with the fewest tasks running
   * (the longest waiting among equals); that tenant then goes to the back of the turn order.
   */
  private next(): void {
    let chosen: [string, (() => void)[]] | undefined;
    for (const entry of this.queues) {
      if (chosen === undefined || (this.running.get(entry[0]) ?? 0) < (this.running.get(chosen[0]) ?? 0))
        chosen = entry;
    }
    if (chosen === undefined) {
      this.active--;
      return;
    }
    const [tenant, queue] = chosen;
    const resolve = queue.shift()!;
    this.queues.delete(tenant);
    if (queue.length > 0) this.queues.set(tenant, queue);
    this.queued--;
    resolve();
  }
}
