/** The log's last lines at exit: written while the reader takes them within a bound, then dropped rather than hanging the exit. */
import type { Logger } from "pino";
import { destinationOf } from "./logger-destination.js";

/**
 * How long a stopping process waits for its log's reader to take what is still queued. A reader that
 * is alive takes a backlog of megabytes in milliseconds; one that has taken nothing for this long has
 * stalled (decision 241).
 */
export const FINAL_LOG_BUDGET_MS = 2_000;

/** What of pino's SonicBoom this reads: its queued byte count, its drain event, and destroy. */
interface QueuedDestination {
  /** Bytes given and not yet taken by the descriptor (SonicBoom's own count). */
  _len: number;
  destroyed: boolean;
  destroy(): void;
  once(event: "drain", listener: () => void): unknown;
  off(event: "drain", listener: () => void): unknown;
  on(event: "error", listener: () => void): unknown;
}

function isQueued(destination: object): destination is QueuedDestination {
  const d = destination as Partial<QueuedDestination>;
  return (
    typeof d._len === "number" &&
    typeof d.destroyed === "boolean" &&
    typeof d.destroy === "function" &&
    typeof d.once === "function" &&
    typeof d.off === "function" &&
    typeof d.on === "function"
  );
}

/**
 * Waits up to `budgetMs` for the logger's destination to write everything queued, and answers
 * whether it did. If it did not, what is queued is dropped and the destination is ended, so the exit
 * does not block on it: pino flushes an asynchronous destination synchronously at exit, retrying
 * every 100 ms while the descriptor answers EAGAIN, which for a reader that has stopped is forever
 * (a process manager's stop timeout was then the only way out). A destination that is not pino's
 * SonicBoom (a test's stream) is left as it is.
 */
export function finishLog(logger: Logger, budgetMs: number = FINAL_LOG_BUDGET_MS): Promise<boolean> {
  const destination = destinationOf(logger);
  if (!isQueued(destination) || destination.destroyed || destination._len === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const drained = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      destination.off("drain", drained);
      // A write already under way still ends (a retry on EAGAIN, or EBADF where the descriptor was
      // closed): what it says no longer matters, and an error nobody listens to would be thrown.
      destination.on("error", () => {});
      destination.destroy();
      resolve(false);
    }, budgetMs);
    destination.once("drain", drained);
  });
}
