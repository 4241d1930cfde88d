/** One ordered list of stop steps: each subsystem registers its own as it starts; they run newest first. */
import type { Logger } from "pino";

export interface Shutdown {
  /** Registers a step; steps run in the reverse order of registration. */
  add(name: string, step: () => void | Promise<void>): void;
  /**
   * Runs every step once (a failing step is logged and the rest still run). A call while a run is
   * under way resolves when that run ends: it found the steps already taken, and resolving at once
   * let its caller exit in the middle of the first run (decision 242).
   */
  run(): Promise<void>;
}

export function createShutdown(logger: Logger): Shutdown {
  const steps: { name: string; step: () => void | Promise<void> }[] = [];
  let running: Promise<void> | undefined;
  const runSteps = async () => {
    for (const { name, step } of steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        logger.error({ err: error, step: name }, "error during shutdown");
      }
    }
  };
  return {
    add(name, step) {
      steps.push({ name, step });
    },
    run() {
      running ??= runSteps().finally(() => {
        running = undefined;
      });
      return running;
    },
  };
}

/** What every subsystem's start-up is given: where to log, and where to register its stop. */
export interface Lifecycle {
  logger: Logger;
  shutdown: Shutdown;
}
