/** Per-lane limits: a token bucket per (source chain, destination chain, token) in the store, shared by every instance. */
import type { Kysely } from "kysely";
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import type { Database, LaneLimitsTable, TransportsTable } from "../store/schema.js";

export interface LaneKey {
  source_chain_id: number;
  destination_chain_id: number;
  token: string;
}

export interface LaneLimitInput extends LaneKey {
  /** Base units (ERC721: tokens) that may cross per period, and the most that may cross at once. */
  capacity: string;
  period_seconds: number;
  /** A transport that would wait longer than this is refunded at this deadline instead. */
  refund_after_seconds?: number | null;
}

export interface LaneLimitRecord extends LaneKey {
  capacity: string;
  period_seconds: number;
  refund_after_seconds: number | null;
  /** What may cross now; negative while queued transports hold their share. */
  available: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

const MAX_WAIT_MS = 100n * 365n * 86_400_000n;

/** When a reserved transport may be delivered, and when it is refunded instead (if that comes first). */
export interface Reservation {
  releaseAt: number;
  refundAt: number | null;
}

/** What a transport counts against its lane: an ERC20's amount, one per ERC721 token; messages are not limited. */
export function laneAmount(row: Pick<TransportsTable, "kind" | "amount">): bigint | undefined {
  if (row.kind === "ERC20") return BigInt(row.amount ?? "0");
  if (row.kind === "ERC721") return 1n;
  return undefined;
}

/** The bucket refilled to `now`: capacity/period per ms, never above capacity. */
export function refill(
  limit: Pick<LaneLimitsTable, "capacity" | "period_ms" | "level" | "level_at">,
  now: number,
) {
  const capacity = BigInt(limit.capacity);
  const elapsed = BigInt(Math.max(0, now - limit.level_at));
  const level = BigInt(limit.level) + (capacity * elapsed) / BigInt(limit.period_ms);
  return level > capacity ? capacity : level;
}

/**
 * Takes `amount` from a bucket at `level` (refilled to now): released now when the bucket holds it,
 * otherwise when the refill has paid the shortfall. Amounts above the capacity wait in proportion,
 * so what crosses in any span t is at most capacity + capacity * t / period.
 */
export function reserveFrom(level: bigint, amount: bigint, capacity: bigint, periodMs: number, now: number) {
  const after = level - amount;
  if (after >= 0n) return { after, releaseAt: now };
  const wait = (-after * BigInt(periodMs) + capacity - 1n) / capacity;
  // Past a century the time means "never" (and would lose precision as a number): the refund deadline decides.
  return { after, releaseAt: now + Number(wait > MAX_WAIT_MS ? MAX_WAIT_MS : wait) };
}

const toRecord = (row: LaneLimitsTable, now: number): LaneLimitRecord => ({
  source_chain_id: row.source_chain_id,
  destination_chain_id: row.destination_chain_id,
  token: row.token,
  capacity: row.capacity,
  period_seconds: row.period_ms / 1000,
  refund_after_seconds: row.refund_after_ms === null ? null : row.refund_after_ms / 1000,
  available: refill(row, now).toString(),
  created_by: row.created_by,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

export class LaneLimits {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sets (or replaces) a lane's limit; the bucket starts full, or keeps its level capped at the new capacity. */
  async set(input: LaneLimitInput, by: string | null): Promise<LaneLimitRecord> {
    const now = this.now();
    const key = { ...input, token: input.token.toLowerCase() };
    if (key.source_chain_id === key.destination_chain_id)
      throw new ChaingateError(
        "a lane joins two different chains: source_chain_id equals destination_chain_id",
        {
          code: "INVALID_LANE_LIMIT",
        },
      );
    const periodMs = input.period_seconds * 1000;
    const refundAfterMs = input.refund_after_seconds == null ? null : input.refund_after_seconds * 1000;
    return this.store.db.transaction().execute(async (trx) => {
      const before = await this.lock(trx, key);
      const capacity = BigInt(input.capacity);
      const level = before === undefined ? capacity : refill(before, now);
      const row: LaneLimitsTable = {
        source_chain_id: key.source_chain_id,
        destination_chain_id: key.destination_chain_id,
        token: key.token,
        capacity: input.capacity,
        period_ms: periodMs,
        refund_after_ms: refundAfterMs,
        level: (level > capacity ? capacity : level).toString(),
        level_at: now,
        created_by: before?.created_by ?? by,
        created_at: before?.created_at ?? now,
        updated_at: now,
      };
      if (before === undefined) await trx.insertInto("lane_limits").values(row).execute();
      else await this.update(trx, key, row);
      return toRecord(row, now);
    });
  }

  async list(): Promise<LaneLimitRecord[]> {
    const now = this.now();
    const rows = await this.store.db
      .selectFrom("lane_limits")
      .selectAll()
      .orderBy("source_chain_id")
      .orderBy("destination_chain_id")
      .orderBy("token")
      .execute();
    return rows.map((row) => toRecord(row, now));
  }

  /** Removes a lane's limit; transports already queued keep their release time. */
  async delete(key: LaneKey): Promise<void> {
    const result = await this.store.db
      .deleteFrom("lane_limits")
      .where("source_chain_id", "=", key.source_chain_id)
      .where("destination_chain_id", "=", key.destination_chain_id)
      .where("token", "=", key.token.toLowerCase())
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0)
      throw new ChaingateError(
        `no limit on the lane ${key.source_chain_id} -> ${key.destination_chain_id} for ${key.token}`,
        { code: "LANE_LIMIT_NOT_FOUND" },
      );
  }

  /**
   * Takes a transport's share of its lane: undefined when the lane has no limit (or the transport is
   * a message). Held under the row's lock, so instances sharing the store never both take the last of it.
   */
  async reserve(row: TransportsTable): Promise<Reservation | undefined> {
    const amount = laneAmount(row);
    if (amount === undefined || row.token === null) return undefined;
    const key = {
      source_chain_id: row.source_chain_id,
      destination_chain_id: row.destination_chain_id,
      token: row.token.toLowerCase(),
    };
    const now = this.now();
    return this.store.db.transaction().execute(async (trx) => {
      const limit = await this.lock(trx, key);
      if (limit === undefined) return undefined;
      const capacity = BigInt(limit.capacity);
      const { after, releaseAt } = reserveFrom(refill(limit, now), amount, capacity, limit.period_ms, now);
      await this.update(trx, key, { level: after.toString(), level_at: now });
      const refundAt =
        limit.refund_after_ms !== null && releaseAt - now > limit.refund_after_ms
          ? now + limit.refund_after_ms
          : null;
      // In the same transaction as the share taken: a crash never takes it twice.
      await trx
        .updateTable("transports")
        .set({ release_at: releaseAt, refund_at: refundAt, updated_at: now })
        .where("id", "=", row.id)
        .execute();
      return { releaseAt, refundAt };
    });
  }

  /** A queued transport refunded instead: its share goes back to the lane (up to the capacity). */
  async giveBack(row: TransportsTable): Promise<void> {
    const amount = laneAmount(row);
    if (amount === undefined || row.token === null) return;
    const key = {
      source_chain_id: row.source_chain_id,
      destination_chain_id: row.destination_chain_id,
      token: row.token.toLowerCase(),
    };
    const now = this.now();
    await this.store.db.transaction().execute(async (trx) => {
      const limit = await this.lock(trx, key);
      if (limit === undefined) return;
      const capacity = BigInt(limit.capacity);
      const level = refill(limit, now) + amount;
      await this.update(trx, key, { level: (level > capacity ? capacity : level).toString(), level_at: now });
    });
  }

  private lock(db: Kysely<Database>, key: LaneKey) {
    return db
      .selectFrom("lane_limits")
      .selectAll()
      .where("source_chain_id", "=", key.source_chain_id)
      .where("destination_chain_id", "=", key.destination_chain_id)
      .where("token", "=", key.token)
      .$if(this.store.kind === "postgres", (q) => q.forUpdate())
      .executeTakeFirst();
  }

  private update(db: Kysely<Database>, key: LaneKey, changes: Partial<LaneLimitsTable>) {
    return db
      .updateTable("lane_limits")
      .set(changes)
      .where("source_chain_id", "=", key.source_chain_id)
      .where("destination_chain_id", "=", key.destination_chain_id)
      .where("token", "=", key.token)
      .execute();
  }
}
