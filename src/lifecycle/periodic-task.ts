/** A background task run every so often: never twice at once, its failures logged, stopped by the shutdown. */
import type { Lifecycle } from "./shutdown.js";

/** How often in-memory caches with deadlines drop what has expired (unlocks, signers, derived keys). */
export const PRUNE_MS = 30_000;

export interface PeriodicTask {
  name: string;
  everyMs: number;
  run: () => unknown;
}

/** Starts `task` on an unref'd timer (it never keeps the process alive) and registers its stop. */
export function startPeriodic(task: PeriodicTask, deps: Lifecycle): void {
  let running = false;
  const timer = setInterval(() => {
    // A slow pass is not overlapped by the next one: that one is skipped.
    if (running) return;
    running = true;
    Promise.resolve()
      .then(task.run)
      .catch((error: unknown) => deps.logger.warn({ err: error, task: task.name }, `${task.name} failed`))
      .finally(() => {
        running = false;
      });
  }, task.everyMs);
  timer.unref();
  deps.shutdown.add(task.name, () => clearInterval(timer));
}
