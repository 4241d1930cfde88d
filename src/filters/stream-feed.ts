/** One resumable subscription's notifications: numbered, each with its cursor, held until the subscription is answered, sent once by position, recorded once they went out. */
import { cursorOf, type Position } from "./stream-cursor.js";
import {
  type Kind,
  type Log,
  STREAM_RECENT_BLOCKS,
  type StreamRecorder,
  type TakenBlock,
} from "./stream-recorder.js";

/** A position past every log of its block (fits the cursor's eight hex digits). */
export const WHOLE_BLOCK = 0xffffffe;

/**
 * One subscription's notifications: numbered, each with its cursor, held until the subscription's
 * answer is out (`release`), sent once by position, and recorded only once they went out.
 */
export class StreamFeed {
  /** Held until the subscription's answer is out; each with what records it once it went out. */
  private outbox: [unknown, string, () => void][] | undefined = [];
  /** newHeads: the hash of each header this feed delivered lately, by height. */
  private readonly headers = new Map<number, string>();

  constructor(
    private readonly kind: Kind,
    private readonly stream: string,
    private readonly recorder: StreamRecorder,
    /** Notifications numbered so far (the stream's count when it opened). */
    private issued: number,
    /** The client's position: nothing at or before it is sent again. */
    private last: Position | undefined,
    private readonly send: (result: unknown, cursor: string) => boolean,
  ) {}

  emit(result: unknown): void {
    const log = result as Log;
    if (this.kind === "logs" && log.removed === true) {
      const taken = Number(BigInt(log.blockNumber));
      // The client no longer has the block: the new chain's logs from its height on are new to
      // it, at whatever index (kept at the old position, they were dropped as already sent), and
      // the removal's cursor resumes from below the block (decision 190).
      this.below(taken);
      // Forgotten only once the client was told: a client that was not resumes before the
      // reorg, and the replay finds the block replaced and tells it then.
      if (this.last !== undefined)
        this.deliver(result, this.last, (count) => this.recorder.forget(log, count));
      else this.recorder.forget(log, this.issued);
      return;
    }
    const at: Position =
      this.kind === "newHeads"
        ? { block: Number(BigInt((result as { number: string }).number)), index: 0 }
        : { block: Number(BigInt(log.blockNumber)), index: Number(BigInt(log.logIndex ?? "0x0")) };
    // Already sent (the replay and the live feed overlap by design): sent once. A header at a
    // height already sent is a reorg's new block when its hash is another (decision 190).
    const last = this.last;
    if (
      last !== undefined &&
      (at.block < last.block || (at.block === last.block && at.index <= last.index)) &&
      !this.replacesHeader(at.block, result)
    )
      return;
    this.last = at;
    if (this.kind === "newHeads") this.sentHeader(at.block, result);
    this.deliver(result, at, (count) => this.recorder.note(this.kind, result, count));
  }

  /** Whether `result` is a header at height `n` other than the one this feed delivered there. */
  private replacesHeader(n: number, result: unknown): boolean {
    if (this.kind !== "newHeads") return false;
    const sent = this.headers.get(n);
    return sent !== undefined && sent !== (result as { hash?: string }).hash;
  }

  /** The header at `n` is the client's now: what it had above it belonged to the replaced chain. */
  private sentHeader(n: number, result: unknown): void {
    for (const height of this.headers.keys()) if (height >= n) this.headers.delete(height);
    this.headers.set(n, String((result as { hash?: string }).hash));
    for (const height of this.headers.keys())
      if (height <= n - STREAM_RECENT_BLOCKS) this.headers.delete(height);
  }

  /** Removals the client's socket took and lost (or never got), sent again, each recorded once it goes out. */
  emitAgain(block: TakenBlock): void {
    this.below(block.n);
    const at = this.last ?? { block: block.n - 1, index: WHOLE_BLOCK };
    for (const log of block.logs)
      this.deliver({ ...log, removed: true }, at, (count) => this.recorder.removed(log, count));
  }

  /** The replay found the client's chain replaced above `to`: what follows is new to it. */
  rewind(to: Position): void {
    this.last = to;
  }

  /** Sends what was held for the subscription's answer; from now on each goes out as it comes. */
  release(): void {
    const held = this.outbox ?? [];
    this.outbox = undefined;
    for (const [result, cursor, sent] of held) if (this.send(result, cursor)) sent();
  }

  /** The client's position moved below block `n`, which it no longer has. */
  private below(n: number): void {
    if (this.last !== undefined && this.last.block >= n) this.last = { block: n - 1, index: WHOLE_BLOCK };
  }

  private deliver(result: unknown, at: Position, record: (count: number) => void): void {
    const count = ++this.issued;
    const cursor = cursorOf(this.stream, at, count);
    const sent = () => record(count);
    if (this.outbox !== undefined) this.outbox.push([result, cursor, sent]);
    else if (this.send(result, cursor)) sent();
  }
}
