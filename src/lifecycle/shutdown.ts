/** One ordered list of stop steps: each subsystem registers its own as it starts; they run newest first. */
import type { Logger } from "pino";

export interface Shutdown {
  /** Registers a step; steps run in the reverse order of registration. */
  add(name: string, step: () => void | Promise<void>): void;
  /** Runs every step once (a failing step is logged and the rest still run). */
  run(): Promise<void>;
}

export function createShutdown(logger: Logger): Shutdown {
  const steps: { name: string; step: () => void | Promise<void> }[] = [];
  return {
    add(name, step) {
      steps.push({ name, step });
    },
    async run() {
      for (const { name, step } of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (error) {
          logger.error({ err: error, step: name }, "error during shutdown");
        }
      }
    },
  };
}

/** What every subsystem's start-up is given: where to log, and where to register its stop. */
export interface Lifecycle {
  logger: Logger;
  shutdown: Shutdown;
}
