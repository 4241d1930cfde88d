/** A counting semaphore that serves tenants in turn (round robin) and bounds what each, and all, may queue. */

import { ChaingateError } from "../errors/chaingate-error.js";
import type { ErrorCode } from "../errors/codes.js";
import { asPromise } from "../lifecycle/as-promise.js";

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
  /**
   * Per tenant with tasks: how many it holds (running or waiting), and how many run now (the next
   * permit goes to a waiting tenant with the fewest). One entry, read once a task: the gate sits
   * on every forwarded read, where a map operation per count was a measurable share.
   */
  private readonly tenants = new Map<string, { held: number; running: number }>();
  private queued = 0;

  constructor(private readonly limits: FairGateLimits) {}

  get waiting(): number {
    return this.queued;
  }

  /** `tenant` "" is the single user of the keyless mode: only the overall queue bounds it. */
  run<T>(tenant: string, task: () => Promise<T>): Promise<T> {
    const counts = this.tenants.get(tenant);
    if (tenant !== "" && counts !== undefined && counts.held >= this.limits.perTenant) {
      return Promise.reject(
        new ChaingateError(
          `too many ${this.limits.what ?? "key derivations"} in progress for this API key (at most ${this.limits.perTenant}); retry in a moment`,
          {
            code: this.limits.code ?? "KDF_BUSY",
            data: { retry_after_seconds: 1 },
          },
        ),
      );
    }
    if (this.active >= this.limits.permits && this.queued >= this.limits.queue) {
      return Promise.reject(
        new ChaingateError(
          `the queue of ${this.limits.what ?? "key derivations"} is full; retry in a moment`,
          {
            code: this.limits.code ?? "KDF_BUSY",
            // The code's second status: not this tenant's share but everyone's queue is full.
            status: 503,
            data: { retry_after_seconds: 1 },
          },
        ),
      );
    }
    const own = counts ?? { held: 0, running: 0 };
    if (counts === undefined) this.tenants.set(tenant, own);
    own.held++;
    // Not async: an async function returning the task's promise would adopt it through a
    // thenable job, two more microtask turns on every forwarded read.
    return this.active < this.limits.permits
      ? this.runNow(tenant, own, task)
      : this.runQueued(tenant, own, task);
  }

  /** A task that waits for a permit, in its tenant's turn. */
  private async runQueued<T>(
    tenant: string,
    own: { held: number; running: number },
    task: () => Promise<T>,
  ): Promise<T> {
    try {
      // `next` hands this task the permit of one that ends (active stays as it is).
      this.queued++;
      await new Promise<void>((resolve) => {
        const queue = this.queues.get(tenant);
        if (queue) queue.push(resolve);
        else this.queues.set(tenant, [resolve]);
      });
      own.running++;
      try {
        return await task();
      } finally {
        own.running--;
        this.next();
      }
    } finally {
      // The entry is the one in the map for as long as the tenant holds a task.
      if (--own.held === 0) this.tenants.delete(tenant);
    }
  }

  /**
   * A task given a free permit at once, without an async frame around it (the gate sits on every
   * forwarded read): the task's own promise is handed back, and the permit and counts are given
   * back when it settles. A task that throws before its promise is a rejection.
   */
  private runNow<T>(
    tenant: string,
    own: { held: number; running: number },
    task: () => Promise<T>,
  ): Promise<T> {
    this.active++;
    own.running++;
    const running = asPromise(task);
    const done = () => {
      own.running--;
      this.next();
      if (--own.held === 0) this.tenants.delete(tenant);
    };
    running.then(done, done);
    return running;
  }

  /**
   * The permit passes to the first waiting task of the waiting tenant with the fewest tasks running
   * (the longest waiting among equals); that tenant then goes to the back of the turn order.
   */
  private runningOf(tenant: string): number {
    return this.tenants.get(tenant)?.running ?? 0;
  }

  private next(): void {
    let chosen: [string, (() => void)[]] | undefined;
    for (const entry of this.queues) {
      if (chosen === undefined || this.runningOf(entry[0]) < this.runningOf(chosen[0])) chosen = entry;
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
