/** The abort of one node call: what the answer reader needs of a signal, at a small share of an AbortSignal's cost. */
import { EventEmitter } from "node:events";

/**
 * The answer reader (answer-reader.ts, decision 199) reads `aborted` and `reason`, and listens once
 * for "abort". An AbortController's signal is an EventTarget, whose making and listening cost
 * about 3 µs a request against 0.1 µs for this; a hedged read makes one for every read it asks, and
 * aborts almost none of them.
 */
export class CallAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}
