/** Resumable newHeads and logs subscriptions: each notification carries a cursor; a client that lost its socket resumes from it on any instance. */
import { randomBytes } from "node:crypto";
import { ChaingateError } from "../errors/chaingate-error.js";
import { invalidParams } from "../errors/rpc-errors.js";
import type { Store } from "../store/database.js";
import type { Chain } from "../upstream/chain-registry.js";
import { blockHashAt, headOf, nodeRead } from "../upstream/node-reads.js";
import { canonicalBase, type RememberedBlock } from "./canonical-base.js";
import { type LogCriteria, logMatches, toHex } from "./filter-criteria.js";
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
}
/**
 * What a stream stored: the blocks it sent lately, and its floor, the newest block below them whose
 * items the client may have had but the stream no longer remembers (the head when it started, or
 * the newest block it let go of), with that block's hash then.
 */
interface StreamMemory {
  floor?: RememberedBlock;
  blocks: RecentBlock[];
}

/** Streams stored before the floor was kept hold a bare array of blocks. */
function readMemory(text: string): StreamMemory {
  const parsed = JSON.parse(text) as RecentBlock[] | StreamMemory;
  return Array.isArray(parsed) ? { blocks: parsed } : parsed;
}

interface Position {
  block: number;
  /** For logs: the last log index sent in `block` (-1: none of it yet). */
  index: number;
}

const cursorOf = (stream: string, at: Position) =>
  `${stream}-${at.block.toString(16)}-${(at.index + 1).toString(16)}`;

function parseCursor(cursor: unknown): { stream: string; at: Position } {
  const match =
    typeof cursor === "string" ? /^([0-9a-f]{32})-([0-9a-f]{1,12})-([0-9a-f]{1,8})$/.exec(cursor) : null;
  if (!match)
    throw invalidParams("resumeAfter must be a cursor from a notification of a resumable subscription");
  return {
    stream: match[1]!,
    at: { block: Number.parseInt(match[2]!, 16), index: Number.parseInt(match[3]!, 16) - 1 },
  };
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
    const { stream, memory, from } = opened;
    criteria = opened.criteria;
    const recorder = new StreamRecorder(this.store, stream, memory, this.now);
    // Held until the subscription's answer is out (see `release`); `sent` records what went out.
    let outbox: [unknown, string, () => void][] | undefined = [];
    const deliver = (result: unknown, cursor: string, sent: () => void) => {
      if (outbox !== undefined) outbox.push([result, cursor, sent]);
      else if (send(result, cursor)) sent();
    };
    let last: Position | undefined = from;
    /** Live notifications that arrive while missed ones are replayed wait here, in order. */
    let buffered: unknown[] | undefined = from === undefined ? undefined : [];
    const emit = (result: unknown) => {
      const log = result as Log;
      if (kind === "logs" && log.removed === true) {
        const taken = Number(BigInt(log.blockNumber));
        // Forgotten only once the client was told: a client that was not resumes before the
        // reorg, and the replay finds the block replaced and tells it then.
        if (last !== undefined) deliver(result, cursorOf(stream, last), () => recorder.forget(taken));
        else recorder.forget(taken);
        return;
      }
      const at: Position =
        kind === "newHeads"
          ? { block: Number(BigInt((result as { number: string }).number)), index: 0 }
          : { block: Number(BigInt(log.blockNumber)), index: Number(BigInt(log.logIndex ?? "0x0")) };
      // Already sent (the replay and the live feed overlap by design): sent once.
      if (
        last !== undefined &&
        (at.block < last.block || (at.block === last.block && at.index <= last.index))
      )
        return;
      last = at;
      deliver(result, cursorOf(stream, at), () => recorder.note(kind, result));
    };
    // Subscribed first, so nothing after the replay's last block can slip between the two.
    const id = this.hub.subscribe(
      chain,
      kind,
      criteria,
      (result) => {
        if (buffered !== undefined) buffered.push(result);
        else emit(result);
      },
      tenant,
    );
    if (from !== undefined) {
      try {
        await this.replay(chain, kind, criteria, from, memory, emit, (to) => {
          last = to;
        });
      } catch (error) {
        this.hub.unsubscribe(id);
        throw error;
      }
      const waiting = buffered ?? [];
      buffered = undefined;
      for (const result of waiting) emit(result);
    }
    const release = () => {
      const held = outbox ?? [];
      outbox = undefined;
      for (const [result, cursor, sent] of held) if (send(result, cursor)) sent();
    };
    return { id, release };
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
    return { stream, criteria, memory, from: undefined };
  }

  /** What the client missed after `from`: logs of replaced blocks as removed, then every later item. */
  private async replay(
    chain: Chain,
    kind: Kind,
    criteria: LogCriteria,
    from: Position,
    memory: StreamMemory,
    emit: (result: unknown) => void,
    rewind: (to: Position) => void,
  ): Promise<void> {
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
    if (replaced.length > 0) rewind({ block: base, index: WHOLE_BLOCK });
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

  note(kind: Kind, result: unknown): void {
    const { number, hash, blockNumber, blockHash } = result as {
      number?: string;
      hash?: string;
      blockNumber?: string;
      blockHash?: string;
    };
    const n = Number(BigInt((kind === "newHeads" ? number : blockNumber) ?? "0x0"));
    const h = (kind === "newHeads" ? hash : blockHash) ?? "";
    let block = this.recent.at(-1);
    if (block === undefined || block.n !== n || block.h !== h) {
      block = kind === "logs" ? { n, h, logs: [] } : { n, h };
      this.recent.push(block);
      if (this.recent.length > STREAM_RECENT_BLOCKS) this.recent = this.recent.slice(-STREAM_RECENT_BLOCKS);
    }
    if (kind === "logs") block.logs!.push(result as Log);
    // What a stream keeps is bounded in logs too, not only in blocks: the oldest blocks go first.
    let kept = this.recent.reduce((sum, b) => sum + (b.logs?.length ?? 0), 0);
    while (kept > STREAM_RECENT_LOGS && this.recent.length > 1) {
      const [oldest, ...rest] = this.recent;
      kept -= oldest!.logs?.length ?? 0;
      this.recent = rest;
    }
    this.schedule();
  }

  forget(n: number): void {
    // Taken back by a reorg, not let go of: the floor stays where it is.
    this.memory.blocks = this.memory.blocks.filter((b) => b.n < n);
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
