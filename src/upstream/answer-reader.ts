/** Reads one node answer whole, as its status and text, straight from undici's dispatch: no response stream, no header object. */
import { isAscii } from "node:buffer";
import { type Dispatcher, errors } from "undici";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { CallAbort } from "./call-abort.js";

/** A node's answer to one HTTP request. */
export interface NodeAnswer {
  status: number;
  text: string;
  /** The bytes `text` was decoded from: a short result is copied out of them (see resultJsonText). */
  bytes: Buffer;
  /**
   * Every byte of the answer was ASCII, so any slice of `text` is as long in UTF-8 bytes as in
   * characters: what is cut out of it is written without counting its bytes again.
   */
  ascii: boolean;
}

/**
 * undici's `request` wraps every answer in a Node stream (a Readable, pushed chunk by chunk, read
 * again by `body.text()`), parses every header into an object and runs the callback in an async
 * scope of its own: about a seventh of a forwarded read's instructions, for an answer
 * that is read whole as text and whose only header of interest is its status (decision 199). This
 * handler keeps the chunks and decodes them once, at the end. It takes undici's handler methods as
 * its own `RequestHandler` does (onConnect, onHeaders, onData, onComplete, onError); undici 7 wraps
 * a handler of the newer shape in an adapter that parses the headers again.
 * - an answer past `maxBytes` is aborted at once, with RESPONSE_TOO_LARGE;
 * - `signal` aborts the call (before it is sent or while it is answered) with its reason;
 * - the status is the final answer's (after any interim 1xx);
 * - every failure is undici's own error (its code says a dropped connection or a timeout).
 */
class AnswerReader implements Dispatcher.DispatchHandler {
  private status = 0;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private abortCall: ((error?: Error) => void) | undefined;
  private done = false;

  constructor(
    private readonly maxBytes: number,
    private readonly resolve: (answer: NodeAnswer) => void,
    private readonly reject: (error: unknown) => void,
    private readonly signal: CallAbort | undefined,
  ) {
    signal?.once("abort", this.onAbort);
  }

  private readonly onAbort = (): void => {
    this.abortCall?.(this.reason());
  };

  private reason(): Error {
    const reason = this.signal?.reason;
    // undici's own when the signal gave none, as its `request` answers such an abort.
    return reason instanceof Error ? reason : new errors.RequestAbortedError();
  }

  onConnect(abort: (error?: Error) => void): void {
    // Called again when undici retries the request on another connection: the newest abort holds.
    this.abortCall = abort;
    if (this.signal?.aborted) abort(this.reason());
  }

  /** Called for each interim 1xx answer too: the last call's status is the final answer's. */
  onHeaders(status: number): boolean {
    this.status = status;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.abortCall?.(
        new ChaingateError(`the node's answer is larger than ${this.maxBytes / 1048576} MiB`, {
          code: "RESPONSE_TOO_LARGE",
        }),
      );
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settle()) return;
    const chunks = this.chunks;
    // One chunk (most answers) decodes as it is; several are joined first, so that a character
    // split between two chunks is decoded whole.
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size);
    // Tested on the bytes, not inferred from the text's length: an invalid byte decodes to one
    // character (U+FFFD) that is three bytes written again.
    const ascii = isAscii(bytes);
    this.resolve({ status: this.status, text: bytes.toString(ascii ? "latin1" : "utf8"), bytes, ascii });
  }

  onError(error: Error): void {
    if (this.settle()) return;
    this.reject(error);
  }

  /** Marks the call answered; true when it was already. */
  private settle(): boolean {
    if (this.done) return true;
    this.done = true;
    this.signal?.off("abort", this.onAbort);
    return false;
  }
}

/** Sends `options` on `dispatcher` and reads the answer whole (at most `maxBytes`). */
export function readAnswer(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  maxBytes: number,
  signal?: CallAbort,
): Promise<NodeAnswer> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, new AnswerReader(maxBytes, resolve, reject, signal));
  });
}
