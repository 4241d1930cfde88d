/** Makes SQLite commits durable off the event loop: one fdatasync of the WAL, shared by every commit before it. */
import { close, fdatasync, fdatasyncSync, open } from "node:fs";
import { promisify } from "node:util";
import { ChaingateError } from "../errors/chaingate-error.js";

const openFile = promisify(open);
const syncFile = promisify(fdatasync);
const closeFile = promisify(close);

/**
 * With `synchronous = FULL` SQLite fsyncs the WAL inside every commit, and better-sqlite3 runs that
 * on the main thread: the whole process waits for the disk (1–2 ms a commit on this class of
 * machine, the largest single cost of a signed transaction). A group commit instead commits with
 * `synchronous = NORMAL` (the WAL frames are written, not yet synced) and waits here, on libuv's
 * thread pool, before it answers anyone. The WAL is append-only between checkpoints and fdatasync
 * covers every byte written to the file before it started, whichever descriptor wrote it, so one
 * flush makes every earlier commit durable: a commit made while a flush is running waits for the
 * next one, which then serves every commit made meanwhile.
 */
export class WalFlush {
  private fd: Promise<number> | undefined;
  /** The WAL's descriptor once open (an inline flush needs it at hand). */
  private opened: number | undefined;
  /** The flush on the disk now. */
  private running: Promise<void> | undefined;
  /** The flush that starts when `running` ends: it covers commits made after `running` began. */
  private queued: Promise<void> | undefined;

  constructor(private readonly walPath: string) {}

  /**
   * Resolves once every commit made before this call is on disk. `inline`: the caller has nothing
   * else for the event loop to do meanwhile (see GroupCommit), so the sync runs on this thread when
   * no flush is under way. Handed to the thread pool, a lone commit's sync paid two thread wake-ups
   * on top of the disk's time: a tenth of a lone transaction's latency on a busy 2-core machine
   * (decision 189).
   */
  flush(inline = false): Promise<void> {
    if (inline && this.opened !== undefined && !this.running && !this.queued) {
      try {
        fdatasyncSync(this.opened);
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(notDurable(error));
      }
    }
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    this.queued = this.running
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        return this.start();
      });
    return this.queued;
  }

  private start(): Promise<void> {
    const run = this.sync().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async sync(): Promise<void> {
    try {
      // The WAL exists from the first write in WAL mode until the last connection closes.
      this.fd ??= openFile(this.walPath, "r").then(
        (fd) => {
          this.opened = fd;
          return fd;
        },
        (error: unknown) => {
          this.fd = undefined;
          throw error;
        },
      );
      await syncFile(await this.fd);
    } catch (error) {
      throw notDurable(error);
    }
  }

  /** After the last commit's flush (the store's close). */
  async close(): Promise<void> {
    await this.queued?.catch(() => {});
    await this.running?.catch(() => {});
    const fd = this.fd;
    this.fd = undefined;
    this.opened = undefined;
    if (fd) await closeFile(await fd).catch(() => {});
  }
}

/** The commit is in the database but may not survive a power cut: not safe to repeat blindly. */
function notDurable(error: unknown): ChaingateError {
  return new ChaingateError(`Cannot make the store's commit durable: ${(error as Error).message}`, {
    code: "STORE_UNAVAILABLE",
    retryable: false,
    cause: error,
  });
}
