/** A background task run every so often: never twice at once, its failures logged, stopped by the shutdown. */
import { BackgroundLoop } from "./background-loop.js";
import type { Lifecycle } from "./shutdown.js";

/** How often in-memory caches with deadlines drop what has expired (unlocks, signers, derived keys). */
export const PRUNE_MS = 30_000;

export interface PeriodicTask {
  name: string;
  everyMs: number;
  run: () => unknown;
}

/** Starts `task` on the shared loop, unref'd (it never keeps the process alive), and registers its stop. */
export function startPeriodic(task: PeriodicTask, deps: Lifecycle): void {
  const loop = new BackgroundLoop({
    name: task.name,
    everyMs: task.everyMs,
    firstAfterMs: task.everyMs,
    pass: task.run,
    logger: deps.logger,
    unref: true,
  });
  loop.start();
  deps.shutdown.add(task.name, () => loop.stop());
}
