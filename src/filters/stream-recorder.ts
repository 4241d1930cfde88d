/** What a resumable stream remembers of what went out (blocks, logs, removals, each with its count), written to the store at most every few tens of milliseconds. */
import type { Store } from "../store/database.js";
import type { RememberedBlock } from "./canonical-base.js";

/** Blocks a stream remembers (hashes, and for logs what it sent): how deep a reorg across a resume is undone. */
export const STREAM_RECENT_BLOCKS = 64;
/** Logs a stream keeps for reorgs across a resume (a busy contract's blocks are kept fewer). */
export const STREAM_RECENT_LOGS = 2_000;

export type Kind = "newHeads" | "logs";
export type Log = Record<string, unknown> & { blockNumber: string; blockHash: string; logIndex?: string };

export interface RecentBlock {
  n: number;
  h: string;
  logs?: Log[];
  /** For each of `logs`, the stream's count when it went out (absent in streams stored before). */
  sentAt?: number[];
}

/**
 * A block a reorg took back after some of its logs went out: for each log, the count its removal
 * went out at, or null while it has not (each log's removal is a notification of its own).
 */
export interface TakenBlock extends RecentBlock {
  logs: Log[];
  removedAt: (number | null)[];
}

/**
 * What a stream stored: the blocks it sent lately, and its floor, the newest block below them whose
 * items the client may have had but the stream no longer remembers (the head when it started, or
 * the newest block it let go of), with that block's hash then. `count` numbers the notifications
 * that went out (each cursor carries its own), and `taken` keeps the blocks a reorg took back, so
 * that a client whose socket took a removal and lost it hears it again (decision 190).
 */
export interface StreamMemory {
  floor?: RememberedBlock;
  blocks: RecentBlock[];
  count?: number;
  taken?: TakenBlock[];
}

/** Streams stored before the floor was kept hold a bare array of blocks. */
export function readMemory(text: string): StreamMemory {
  const parsed = JSON.parse(text) as RecentBlock[] | StreamMemory;
  return Array.isArray(parsed) ? { blocks: parsed } : parsed;
}

/** The logs of `block` the client had by notification `count`; the block as it is when no counts were kept. */
function hadBy<B extends RecentBlock>(block: B, count: number): B {
  if (block.sentAt === undefined || block.logs === undefined) return block;
  const { logs, sentAt } = block;
  const kept = sentAt.flatMap((at, i) => (at <= count ? [i] : []));
  const trimmed: RecentBlock = {
    ...block,
    logs: kept.map((i) => logs[i]!),
    sentAt: kept.map((i) => sentAt[i]!),
  };
  if ("removedAt" in block) {
    const removedAt = (block as unknown as TakenBlock).removedAt;
    // A removal that went out after `count` did not reach this client: it is sent again.
    (trimmed as TakenBlock).removedAt = kept.map((i) => {
      const at = removedAt[i] ?? null;
      return at !== null && at <= count ? at : null;
    });
  }
  return trimmed as B;
}

const hasLogs = (block: RecentBlock) => block.logs === undefined || block.logs.length > 0;

/**
 * The records with a write to come or under way, so that a stopping instance writes them before its
 * store closes: a client whose instance is shut down resumes on another at once, and a record left
 * behind its cursor would refuse that resume (decision 237) though nothing crashed.
 */
export class PendingRecords {
  private readonly pending = new Set<StreamRecorder>();

  add(recorder: StreamRecorder): void {
    this.pending.add(recorder);
  }

  delete(recorder: StreamRecorder): void {
    this.pending.delete(recorder);
  }

  /** Writes every record now (and waits for those already on their way). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending].map((recorder) => recorder.write()));
  }
}

export class StreamRecorder {
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  /** The write on its way, if any (a flush waits for it). */
  private writing: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly id: string,
    private readonly memory: StreamMemory,
    private readonly now: () => number,
    private readonly pending?: PendingRecords,
  ) {}

  private get recent(): RecentBlock[] {
    return this.memory.blocks;
  }

  private set recent(blocks: RecentBlock[]) {
    // What falls out of memory raises the floor: the newest block the stream lets go of.
    const kept = new Set(blocks);
    for (const block of this.memory.blocks)
      if (!kept.has(block) && (this.memory.floor === undefined || block.n > this.memory.floor.n))
        this.memory.floor = { n: block.n, h: block.h };
    this.memory.blocks = blocks;
  }

  /** `result` went out as the stream's notification number `count`. */
  note(kind: Kind, result: unknown, count: number): void {
    const { number, hash, blockNumber, blockHash } = result as {
      number?: string;
      hash?: string;
      blockNumber?: string;
      blockHash?: string;
    };
    const n = Number(BigInt((kind === "newHeads" ? number : blockNumber) ?? "0x0"));
    const h = (kind === "newHeads" ? hash : blockHash) ?? "";
    // A reorg's new header: the replaced ones at and above its height are no longer the client's.
    if (kind === "newHeads") this.memory.blocks = this.memory.blocks.filter((b) => b.n < n);
    let block = this.recent.at(-1);
    if (block === undefined || block.n !== n || block.h !== h) {
      block = kind === "logs" ? { n, h, logs: [], sentAt: [] } : { n, h };
      this.recent.push(block);
      if (this.recent.length > STREAM_RECENT_BLOCKS) this.recent = this.recent.slice(-STREAM_RECENT_BLOCKS);
    }
    if (kind === "logs") {
      block.logs!.push(result as Log);
      block.sentAt?.push(count);
    }
    // What a stream keeps is bounded in logs too, not only in blocks: the oldest blocks go first.
    let kept = this.recent.reduce((sum, b) => sum + (b.logs?.length ?? 0), 0);
    while (kept > STREAM_RECENT_LOGS && this.recent.length > 1) {
      const [oldest, ...rest] = this.recent;
      kept -= oldest!.logs?.length ?? 0;
      this.recent = rest;
    }
    this.counted(count);
  }

  /**
   * `log`'s removal went out as notification `count`: its block (and every block above it) is
   * taken back, each of their logs' removals to go out in turn.
   */
  forget(log: Log, count: number): void {
    const n = Number(BigInt(log.blockNumber));
    // Taken back by a reorg, not let go of: the floor stays where it is.
    for (const block of this.memory.blocks) if (block.n >= n && block.logs !== undefined) this.take(block);
    this.memory.blocks = this.memory.blocks.filter((b) => b.n < n);
    this.removed(log, count);
  }

  /** A removal of `log` (of a block taken back before) went out as notification `count`. */
  removed(log: Log, count: number): void {
    const n = Number(BigInt(log.blockNumber));
    const block = this.memory.taken?.find((t) => t.n === n && t.h === log.blockHash);
    const i = block?.logs.findIndex((l) => l.logIndex === log.logIndex) ?? -1;
    if (block !== undefined && i >= 0) block.removedAt[i] = count;
    this.counted(count);
  }

  /**
   * The client resumes having had the notifications up to `count`: the stream remembers only those
   * from here on (the replay sends the rest again), and answers the blocks taken back whose logs
   * the client had, each with only the logs whose removal it did not get.
   */
  rewindTo(count: number): TakenBlock[] {
    this.memory.blocks = this.memory.blocks.map((block) => hadBy(block, count)).filter(hasLogs);
    // Kept until each removal goes out again (a resume that fails finds them again); a log the
    // client never had needs no removal.
    this.memory.taken = (this.memory.taken ?? []).map((block) => hadBy(block, count)).filter(hasLogs);
    this.memory.count = count;
    this.schedule();
    return this.memory.taken
      .map((block) => {
        const unsent = block.logs.flatMap((_, i) => (block.removedAt[i] === null ? [i] : []));
        return { ...block, logs: unsent.map((i) => block.logs[i]!), removedAt: unsent.map(() => null) };
      })
      .filter((block) => block.logs.length > 0);
  }

  /** Kept among the taken blocks, no removal out yet; the oldest go past the stream's bounds. */
  private take(block: RecentBlock): void {
    this.memory.taken ??= [];
    const taken = this.memory.taken;
    const logs = block.logs ?? [];
    const known = taken.findIndex((t) => t.n === block.n && t.h === block.h);
    if (known >= 0) taken.splice(known, 1);
    taken.push({ ...block, logs, removedAt: logs.map(() => null) });
    let held = taken.reduce((sum, b) => sum + b.logs.length, 0);
    while (taken.length > STREAM_RECENT_BLOCKS || (held > STREAM_RECENT_LOGS && taken.length > 1))
      held -= taken.shift()!.logs.length;
  }

  private counted(count: number): void {
    this.memory.count = Math.max(this.memory.count ?? 0, count);
    this.schedule();
  }

  private schedule(): void {
    if (this.dirty) return;
    this.dirty = true;
    this.pending?.add(this);
    this.timer = setTimeout(() => void this.write(), 20).unref();
  }

  /** Writes what the stream remembers now, if anything changed since the last write. */
  write(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty) return this.writing ?? Promise.resolve();
    this.dirty = false;
    // After the write before it, never beside it: the newer memory must land last.
    const written = (this.writing ?? Promise.resolve())
      .then(() =>
        this.store.db
          .updateTable("subscription_streams")
          .set({ recent: JSON.stringify(this.memory), updated_at: this.now() })
          .where("id", "=", this.id)
          .execute(),
      )
      .then(
        () => {},
        () => {
          // The store did not answer: the next block writes the stream again.
        },
      )
      .finally(() => {
        if (this.writing !== written) return;
        this.writing = undefined;
        if (!this.dirty) this.pending?.delete(this);
      });
    this.writing = written;
    return written;
  }
}
