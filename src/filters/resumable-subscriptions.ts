/** Resumable newHeads and logs subscriptions: each notification carries a cursor; a client that lost its socket resumes from it on any instance. */
import { randomBytes } from "node:crypto";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { Chain } from "../upstream/chain-registry.js";
import { blockHashAt, headOf, nodeRead } from "../upstream/node-reads.js";
import { canonicalBase, type RememberedBlock } from "./canonical-base.js";
import { type LogCriteria, logMatches, toHex } from "./filter-criteria.js";
import { cursorOf, type Position, parseCursor } from "./stream-cursor.js";
import type { SubscriptionHub } from "./subscription-hub.js";

/** How far back a cursor may be resumed: past this the client reads what it missed with eth_getLogs. */
export const RESUME_MAX_BLOCKS = 1_024;
/** Blocks a stream remembers (hashes, and for logs what it sent): how deep a reorg across a resume is undone. */
export const STREAM_RECENT_BLOCKS = 64;
/** Logs a stream keeps for reorgs across a resume (a busy contract's blocks are kept fewer). */
export const STREAM_RECENT_LOGS = 2_000;
/** A stream not used for this long is forgotten; its cursors are then refused. */
export const STREAM_RETENTION_MS = 60 * 60_000;

type Kind = "newHeads" | "logs";
/** A position past every log of its block (fits the cursor's eight hex digits). */
const WHOLE_BLOCK = 0xffffffe;
type Log = Record<string, unknown> & { blockNumber: string; blockHash: string; logIndex?: string };
interface RecentBlock {
  n: number;
  h: string;
  logs?: Log[];
  /** For each of `logs`, the stream's count when it went out (absent in streams stored before). */
  sentAt?: number[];
}
/** A block a reorg took back after some of its logs went out, with the count its removal went out at. */
interface TakenBlock extends RecentBlock {
  removedAt: number;
}
/**
 * What a stream stored: the blocks it sent lately, and its floor, the newest block below them whose
 * items the client may have had but the stream no longer remembers (the head when it started, or
 * the newest block it let go of), with that block's hash then. `count` numbers the notifications
 * that went out (each cursor carries its own), and `taken` keeps the blocks whose removal went out,
 * so that a client whose socket took a removal and lost it hears it again (decision 190).
 */
interface StreamMemory {
  floor?: RememberedBlock;
  blocks: RecentBlock[];
  count?: number;
  taken?: TakenBlock[];
}

/** Streams stored before the floor was kept hold a bare array of blocks. */
function readMemory(text: string): StreamMemory {
  const parsed = JSON.parse(text) as RecentBlock[] | StreamMemory;
  return Array.isArray(parsed) ? { blocks: parsed } : parsed;
}

const gone = (why: string) =>
  new ChaingateError(
    `cannot resume: ${why}; subscribe afresh and read what was missed with eth_getLogs or eth_getBlockByNumber`,
    {
      code: "SUBSCRIPTION_EXPIRED",
    },
  );

interface OpenedStream {
  stream: string;
  criteria: LogCriteria;
  memory: StreamMemory;
  /** Where a resumed stream's client was: undefined for a new stream. */
  from: Position | undefined;
  /** How many notifications the resumed stream's client had (its cursor's count), when known. */
  count: number | undefined;
}

export class ResumableSubscriptions {
  constructor(
    private readonly hub: SubscriptionHub,
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Subscribes (resuming after `resumeAfter` when given): `send` gets each result with the cursor to
   * resume after it. Answers the subscription id, and `release`: nothing is sent before it is
   * called, so the caller answers the subscription first and every notification (the replay
   * included) carries the id the client knows. On resume, what the client had from blocks a reorg
   * replaced comes back with `removed: true` (logs), then everything after the cursor once, in order.
   * `send` answers whether the notification went out (false: the socket is closing); the stream
   * remembers only what went out, so a resume from the client's last cursor still finds what it
   * did not get (decision 188).
   */
  async subscribe(
    chain: Chain,
    kind: Kind,
    criteria: LogCriteria,
    tenant: string,
    resumeAfter: unknown,
    send: (result: unknown, cursor: string) => boolean,
  ): Promise<{ id: string; release(): void }> {
    const opened =
      resumeAfter === undefined
        ? await this.newStream(chain, kind, criteria, tenant)
        : await this.resumedStream(chain, kind, tenant, resumeAfter);
    const { stream, memory, from, count } = opened;
    const recorder = new StreamRecorder(this.store, stream, memory, this.now);
    // What the client had is what the stream remembers from here on (the replay sends the rest again).
    const missed = from !== undefined && count !== undefined ? recorder.rewindTo(count) : [];
    const feed = new StreamFeed(kind, stream, recorder, memory.count ?? 0, from, send);
    /** Live notifications that arrive while missed ones are replayed wait here, in order. */
    let buffered: unknown[] | undefined = from === undefined ? undefined : [];
    // Subscribed first, so nothing after the replay's last block can slip between the two.
    const id = this.hub.subscribe(
      chain,
      kind,
      opened.criteria,
      (result) => {
        if (buffered !== undefined) buffered.push(result);
        else feed.emit(result);
      },
      tenant,
    );
    if (from !== undefined) {
      try {
        for (const block of missed) feed.emitAgain(block);
        // Below every block whose removal it missed, the client's chain is the one to check.
        const lowest = Math.min(...missed.map((block) => block.n));
        const at = missed.length === 0 ? from : { block: lowest - 1, index: WHOLE_BLOCK };
        await this.replay(chain, kind, opened.criteria, at, memory, feed);
      } catch (error) {
        this.hub.unsubscribe(id);
        throw error;
      }
      const waiting = buffered ?? [];
      buffered = undefined;
      for (const result of waiting) feed.emit(result);
    }
    return { id, release: () => feed.release() };
  }

  /** The stream a cursor names, checked to be this key's, on this chain, of this kind, and recent enough. */
  private async resumedStream(
    chain: Chain,
    kind: Kind,
    tenant: string,
    resumeAfter: unknown,
  ): Promise<OpenedStream> {
    const cursor = parseCursor(resumeAfter);
    const row = await this.store.db
      .selectFrom("subscription_streams")
      .selectAll()
      .where("id", "=", cursor.stream)
      .executeTakeFirst();
    if (!row || row.owner !== tenant || row.chain_id !== chain.chainId || row.kind !== kind)
      throw gone(
        "the cursor names no stream of this key on this chain (streams unused for an hour are forgotten)",
      );
    const head = chain.head?.highest;
    if (head !== undefined && head - cursor.at.block > RESUME_MAX_BLOCKS)
      throw gone(
        `the cursor is ${head - cursor.at.block} blocks old; at most ${RESUME_MAX_BLOCKS} can be resumed`,
      );
    return {
      stream: row.id,
      criteria: JSON.parse(row.criteria) as LogCriteria,
      memory: readMemory(row.recent),
      from: cursor.at,
      count: cursor.count,
    };
  }

  /** A new stream, stored with the head it starts at. */
  private async newStream(
    chain: Chain,
    kind: Kind,
    criteria: LogCriteria,
    tenant: string,
  ): Promise<OpenedStream> {
    const stream = randomBytes(16).toString("hex");
    const now = this.now();
    let memory: StreamMemory = { blocks: [] };
    // The head it starts at: nothing at or below it was sent, so a reorg under every block the
    // stream sent is checked against this block, not guessed.
    const start = chain.head?.highest ?? (await headOf(chain));
    const hash = await blockHashAt(chain, start).catch(() => null);
    if (hash !== null) memory = { floor: { n: start, h: hash }, blocks: [] };
    await this.store.db
      .insertInto("subscription_streams")
      .values({
        id: stream,
        owner: tenant,
        chain_id: chain.chainId,
        kind,
        criteria: JSON.stringify(criteria),
        recent: JSON.stringify(memory),
        created_at: now,
        updated_at: now,
      })
      .execute();
    return { stream, criteria, memory, from: undefined, count: undefined };
  }

  /** What the client missed after `from`: logs of replaced blocks as removed, then every later item. */
  private async replay(
    chain: Chain,
    kind: Kind,
    criteria: LogCriteria,
    from: Position,
    memory: StreamMemory,
    feed: StreamFeed,
  ): Promise<void> {
    const emit = (result: unknown) => feed.emit(result);
    const had = memory.blocks.filter((b) => b.n <= from.block);
    const hashAt = (n: number) => blockHashAt(chain, n);
    let { base, replaced } = await canonicalBase(had, hashAt, from.block);
    // Every block the stream remembers was replaced: the fork is below all of them, and the blocks
    // between its floor and the oldest held nothing for it. The floor is checked against the chain;
    // the new chain's items from above it on are all new to the client.
    if (replaced.length > 0 && replaced.length === had.length && memory.floor !== undefined) {
      const floor = memory.floor;
      base = (await hashAt(floor.n)) === floor.h ? floor.n : Math.max(0, floor.n - STREAM_RECENT_BLOCKS);
    }
    if (kind === "logs")
      for (const block of replaced)
        for (const log of block.logs ?? []) {
          const index = Number(BigInt(log.logIndex ?? "0x0"));
          if (block.n < from.block || index <= from.index) emit({ ...log, removed: true });
        }
    // What the client had above the fork is gone: the new chain's items from there on are all new to it.
    if (replaced.length > 0) feed.rewind({ block: base, index: WHOLE_BLOCK });
    const head = chain.head?.highest ?? (await headOf(chain));
    // With no reorg, the cursor's own block may hold logs the client has not had yet.
    const start = replaced.length > 0 ? base + 1 : kind === "logs" ? from.block : from.block + 1;
    if (start > head) return;
    if (kind === "newHeads") {
      for (let n = start; n <= head; n++) {
        const block = await nodeRead(chain, "eth_getBlockByNumber", [toHex(n), false]);
        if (!block) break;
        const { transactions: _omitted, ...header } = block;
        emit(header);
      }
      return;
    }
    const logs = await nodeRead(chain, "eth_getLogs", [
      { ...criteria, fromBlock: toHex(start), toBlock: toHex(head) },
    ]);
    for (const log of logs)
      if (logMatches(criteria, log as { address?: string; topics?: string[] })) emit(log);
  }

  /** Forgets streams unused for an hour (run periodically). */
  async prune(): Promise<void> {
    await this.store.db
      .deleteFrom("subscription_streams")
      .where("updated_at", "<", this.now() - STREAM_RETENTION_MS)
      .execute();
  }
}

/**
 * One subscription's notifications: numbered, each with its cursor, held until the subscription's
 * answer is out (`release`), sent once by position, and recorded only once they went out.
 */
class StreamFeed {
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
        this.deliver(result, this.last, (count) => this.recorder.forget(taken, count));
      else this.recorder.forget(taken, this.issued);
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

  /** A removal the client's socket took and lost, sent again: taken again once it goes out. */
  emitAgain(block: TakenBlock): void {
    this.below(block.n);
    const at = this.last ?? { block: block.n - 1, index: WHOLE_BLOCK };
    for (const log of block.logs ?? [])
      this.deliver({ ...log, removed: true }, at, (count) => this.recorder.retake(block, count));
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

/** What a stream sent lately, written to the store at most every few tens of milliseconds. */
class StreamRecorder {
  private dirty = false;

  constructor(
    private readonly store: Store,
    private readonly id: string,
    private readonly memory: StreamMemory,
    private readonly now: () => number,
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
    this.counted(count);
    // What a stream keeps is bounded in logs too, not only in blocks: the oldest blocks go first.
    let kept = this.recent.reduce((sum, b) => sum + (b.logs?.length ?? 0), 0);
    while (kept > STREAM_RECENT_LOGS && this.recent.length > 1) {
      const [oldest, ...rest] = this.recent;
      kept -= oldest!.logs?.length ?? 0;
      this.recent = rest;
    }
    this.schedule();
  }

  /** The removal of block `n` (and of any block above it) went out as notification `count`. */
  forget(n: number, count: number): void {
    // Taken back by a reorg, not let go of: the floor stays where it is.
    for (const block of this.memory.blocks) if (block.n >= n) this.take(block, count);
    this.memory.blocks = this.memory.blocks.filter((b) => b.n < n);
    this.counted(count);
  }

  /** A removal sent again on resume went out as notification `count`. */
  retake(block: TakenBlock, count: number): void {
    this.take(block, count);
    this.counted(count);
  }

  /**
   * The client resumes having had the notifications up to `count`: the stream remembers only those
   * from here on (the replay sends the rest again), and answers the blocks whose logs the client
   * had and whose removal it did not get, each with only the logs it had.
   */
  rewindTo(count: number): TakenBlock[] {
    const had = <B extends RecentBlock>(block: B): B => {
      if (block.sentAt === undefined || block.logs === undefined) return block;
      const { logs, sentAt } = block;
      const kept = sentAt.flatMap((at, i) => (at <= count ? [i] : []));
      return { ...block, logs: kept.map((i) => logs[i]!), sentAt: kept.map((i) => sentAt[i]!) };
    };
    const hasLogs = (block: RecentBlock) => block.logs === undefined || block.logs.length > 0;
    this.memory.blocks = this.memory.blocks.map(had).filter(hasLogs);
    const taken = this.memory.taken ?? [];
    // Kept until sent again (a resume that fails finds them again); a block whose logs the client
    // never had needs no removal, and is dropped.
    const missed = taken
      .filter((block) => block.removedAt > count)
      .map(had)
      .filter(hasLogs);
    this.memory.taken = [...taken.filter((block) => block.removedAt <= count), ...missed];
    this.memory.count = count;
    this.schedule();
    return missed;
  }

  /** Kept among the taken blocks, removed at `count`; the oldest go past the stream's bounds. */
  private take(block: RecentBlock, count: number): void {
    this.memory.taken ??= [];
    const taken = this.memory.taken;
    const known = taken.find((t) => t.n === block.n && t.h === block.h);
    // The count of the removal that went out last: a client that had it resumes after it.
    if (known !== undefined) known.removedAt = count;
    else taken.push({ ...block, removedAt: count });
    let logs = taken.reduce((sum, b) => sum + (b.logs?.length ?? 0), 0);
    while (taken.length > STREAM_RECENT_BLOCKS || (logs > STREAM_RECENT_LOGS && taken.length > 1))
      logs -= taken.shift()!.logs?.length ?? 0;
  }

  private counted(count: number): void {
    this.memory.count = Math.max(this.memory.count ?? 0, count);
    this.schedule();
  }

  private schedule(): void {
    if (this.dirty) return;
    this.dirty = true;
    setTimeout(() => {
      this.dirty = false;
      void this.store.db
        .updateTable("subscription_streams")
        .set({ recent: JSON.stringify(this.memory), updated_at: this.now() })
        .where("id", "=", this.id)
        .execute()
        .catch(() => {
          // The store did not answer: the next block writes the stream again.
        });
    }, 20).unref();
  }
}
