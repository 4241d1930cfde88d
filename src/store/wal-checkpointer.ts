/** Checkpoints a SQLite file's WAL from a worker thread, so the request path never copies pages or syncs the database file. */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** WAL size past which the worker copies it into the database (SQLite's own default: 1,000 pages). */
export const CHECKPOINT_AT_BYTES = 4 * 1024 * 1024;
/**
 * WAL pages (4 KB) past which the request connection checkpoints in its commit after all (16 MB):
 * what bounds the WAL under writes that never pause (see WalCheckpointer).
 */
export const REQUEST_CHECKPOINT_PAGES = 4096;
/** How often the worker looks at the WAL's size (a stat; nothing else when there is nothing to do). */
const LOOK_EVERY_MS = 100;

/**
 * SQLite checkpoints in the commit that takes the WAL past 1,000 pages: that commit copies every
 * page into the database file and syncs both, on the main thread (8–34 ms on this class of
 * machine, a stall of every request; half of all commit time in the transaction bench). The
 * request connection checkpoints only past REQUEST_CHECKPOINT_PAGES instead, and a worker thread
 * with its own connection runs `wal_checkpoint(PASSIVE)` whenever the WAL has grown past
 * CHECKPOINT_AT_BYTES: a passive checkpoint never blocks the writer, and the writer starts the WAL
 * over once everything in it has been copied. Under writes that never pause that moment never
 * comes (frames are appended while the worker copies), and the WAL would grow without bound (488 MB
 * in 15 s of 16 writers); the request connection's own checkpoint at 16 MB then copies the little
 * the worker has not (the writer is paused for it) and lets the WAL start over. Plain CommonJS, evaluated: the same code runs from
 * the built service and from the tests.
 */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { statSync } = require("node:fs");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = FULL");
const wal = workerData.path + "-wal";
let timer;
const look = () => {
  try {
    let size = 0;
    try { size = statSync(wal).size; } catch {}
    if (size >= workerData.atBytes) {
      const [result] = db.pragma("wal_checkpoint(PASSIVE)");
      parentPort.postMessage({ checkpointed: result });
    }
  } catch (error) {
    parentPort.postMessage({ failed: String(error && error.message || error) });
  }
  timer = setTimeout(look, workerData.everyMs);
};
timer = setTimeout(look, workerData.everyMs);
parentPort.on("message", (message) => {
  if (message !== "close") return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export class WalCheckpointer {
  private readonly worker: Worker;
  private closed = false;
  /** Checkpoints run so far (for tests and the operator's curiosity). */
  checkpoints = 0;

  /**
   * `onFault` hears a checkpoint that failed or a worker that died; `fallback` is then run once,
   * to give checkpointing back to the request connection.
   */
  constructor(
    path: string,
    private readonly onFault: (error: Error) => void,
    private readonly fallback: () => void,
  ) {
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        path,
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
        atBytes: CHECKPOINT_AT_BYTES,
        everyMs: LOOK_EVERY_MS,
      },
    });
    // It must not keep the process alive on its own: the store's close ends it.
    this.worker.unref();
    this.worker.on("message", (message: { checkpointed?: unknown; failed?: string }) => {
      if (message.checkpointed !== undefined) this.checkpoints++;
      if (message.failed !== undefined) this.onFault(new Error(`WAL checkpoint failed: ${message.failed}`));
    });
    // An error thrown in the worker arrives structured-cloned: a driver error may be only its code.
    this.worker.on("error", (error: unknown) => {
      const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
      const detail = typeof message === "string" ? message : String(code ?? "unknown error");
      this.died(new Error(`WAL checkpoint worker failed: ${detail}`, { cause: error }));
    });
    this.worker.on("exit", (code) => {
      if (!this.closed) this.died(new Error(`WAL checkpoint worker exited with code ${code}`));
    });
  }

  private died(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.onFault(error);
    this.fallback();
  }

  /** Stops the worker (before the request connection closes, which then checkpoints the rest). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    // Waited for: the process must not end (with an unsettled await) before the worker has.
    this.worker.ref();
    this.worker.postMessage("close");
    await exited;
  }
}
