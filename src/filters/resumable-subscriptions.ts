/** Resumable newHeads and logs subscriptions: each notification carries a cursor; a client that lost its socket resumes from it on any instance. */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { Chain } from "../upstream/chain-registry.js";
import { blockHashAt, headOf, nodeRead } from "../upstream/node-reads.js";
import { canonicalBase } from "./canonical-base.js";
import { type LogCriteria, logMatches, toHex } from "./filter-criteria.js";
import { type Position, parseCursor } from "./stream-cursor.js";
import { StreamFeed, WHOLE_BLOCK } from "./stream-feed.js";
import {
  type Kind,
  PendingRecords,
  readMemory,
  STREAM_RECENT_BLOCKS,
  type StreamMemory,
  StreamRecorder,
} from "./stream-recorder.js";
import type { SubscriptionHub } from "./subscription-hub.js";

/** How far back a cursor may be resumed: past this the client reads what it missed with eth_getLogs. */
export const RESUME_MAX_BLOCKS = 1_024;
/** A stream not used for this long is forgotten; its cursors are then refused. */
export const STREAM_RETENTION_MS = 60 * 60_000;
/**
 * How long a resume waits for the stream's record to hold what its cursor had (decision 237): the
 * record is written a few tens of milliseconds after each notification, by whichever instance sent
 * it, and a client may be back sooner.
 */
export const RECORD_WAIT_MS = 5_000;
/** How often a resume reads the record again while it waits. */
const RECORD_POLL_MS = 25;

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
  /** Stream records not yet written: written at once when the instance stops. */
  private readonly records = new PendingRecords();

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
    const recorder = new StreamRecorder(this.store, stream, memory, this.now, this.records);
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
    const read = () =>
      this.store.db
        .selectFrom("subscription_streams")
        .selectAll()
        .where("id", "=", cursor.stream)
        .executeTakeFirst();
    let row = await read();
    if (!row || row.owner !== tenant || row.chain_id !== chain.chainId || row.kind !== kind)
      throw gone(
        "the cursor names no stream of this key on this chain (streams unused for an hour are forgotten)",
      );
    const head = chain.head?.highest;
    if (head !== undefined && head - cursor.at.block > RESUME_MAX_BLOCKS)
      throw gone(
        `the cursor is ${head - cursor.at.block} blocks old; at most ${RESUME_MAX_BLOCKS} can be resumed`,
      );
    let memory = readMemory(row.recent);
    // A record behind the cursor does not know the last items the client had: a reorg that took
    // them back would go unreported. Wait for the write that is on its way; a record that never
    // catches up (its instance stopped before writing) cannot say what the client had.
    const deadline = Date.now() + RECORD_WAIT_MS;
    while (cursor.count !== undefined && (memory.count ?? 0) < cursor.count) {
      if (Date.now() >= deadline)
        throw gone(
          `the stream's record holds ${memory.count ?? 0} of the cursor's ${cursor.count} notifications (the instance that sent the rest stopped before recording them)`,
        );
      await sleep(RECORD_POLL_MS);
      row = await read();
      if (!row) throw gone("the stream was forgotten while this resume waited for its record");
      memory = readMemory(row.recent);
    }
    return {
      stream: row.id,
      criteria: JSON.parse(row.criteria) as LogCriteria,
      memory,
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

  /** Writes every stream's record that is not yet written (on shutdown, before the store closes). */
  flush(): Promise<void> {
    return this.records.flush();
  }

  /** Forgets streams unused for an hour (run periodically). */
  async prune(): Promise<void> {
    await this.store.db
      .deleteFrom("subscription_streams")
      .where("updated_at", "<", this.now() - STREAM_RETENTION_MS)
      .execute();
  }
}
