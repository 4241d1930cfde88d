/** A background pass run again and again: one at a time, the next after a pause or at once when woken, stopped with its pass awaited. */
import type { Logger } from "pino";

export interface LoopOptions {
  /** Named in the warning a failed pass logs. */
  name: string;
  /** The pause between the end of one pass and the start of the next. */
  everyMs: number;
  /** One pass. The signal aborts when the loop stops, so a long pass can end early. */
  pass: (signal: AbortSignal) => unknown;
  /** Where a failed pass is told; the loop goes on after it. */
  logger: Pick<Logger, "warn">;
  /**
   * The wait before the first pass: a number of ms, or "now" to begin the first pass within
   * start() itself (default 0: on the next turn of the event loop).
   */
  firstAfterMs?: number | "now";
  /** Waiting for the next pass does not keep the process alive. */
  unref?: boolean;
}

/**
 * The loop every background worker shares (relayer, tracker, webhook sender, readiness, periodic
 * chores): each used to write its own timer, running and stopped fields, each slightly differently.
 */
export class BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private woken = false;
  private stopped = true;
  private abort = new AbortController();

  constructor(private readonly options: LoopOptions) {}

  /** Starts the loop (again, after a stop: with a fresh signal). */
  start(): void {
    if (this.abort.signal.aborted) this.abort = new AbortController();
    this.stopped = false;
    const first = this.options.firstAfterMs ?? 0;
    if (first === "now") this.run();
    else this.schedule(first);
  }

  /** Runs the next pass now rather than after the pause (after the current one, if one is running). */
  wake(): void {
    if (this.stopped) return;
    if (this.current !== undefined) {
      this.woken = true;
      return;
    }
    this.schedule(0);
  }

  /** No pass starts after this; resolves once the running pass (told by its signal) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
    await this.current;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.run, ms);
    if (this.options.unref) this.timer.unref();
  }

  private readonly run = (): void => {
    this.timer = undefined;
    // The pass begins here, synchronously (a throw becomes a rejection, logged like any failure).
    const signal = this.abort.signal;
    this.current = (async () => {
      await this.options.pass(signal);
    })()
      .then(
        () => undefined,
        (error: unknown) =>
          this.options.logger.warn({ err: error, task: this.options.name }, `${this.options.name} failed`),
      )
      .finally(() => {
        this.current = undefined;
        if (this.stopped) return;
        const delay = this.woken ? 0 : this.options.everyMs;
        this.woken = false;
        this.schedule(delay);
      });
  };
}
