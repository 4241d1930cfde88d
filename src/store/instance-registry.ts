/** The instances sharing this store, counted by heartbeat: each enforces its share of a per-key limit. */
import { randomUUID } from "node:crypto";
import type { Store } from "./database.js";

/** How often an instance says it is alive, and after how long without a word it is counted out. */
export const HEARTBEAT_MS = 2_000;
export const INSTANCE_STALE_MS = 3 * HEARTBEAT_MS;

/**
 * A per-key limit holds for the cluster without a store round trip per request: each of the N live
 * instances allows limit / N. Behind a round-robin balancer each sees a third of a key's requests
 * and the whole cluster allows the limit; a client pinned to one instance gets that instance's share
 * (stricter, never looser). On SQLite there is one instance.
 */
export class InstanceRegistry {
  readonly id = randomUUID();
  private live = 1;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Instances alive as of the last heartbeat (this one included). */
  get instances(): number {
    return this.live;
  }

  /** This instance's share of a cap (0 or less: no cap), never below 1 for a cap of at least 1. */
  share(cap: number): number {
    if (cap <= 0 || this.live <= 1) return cap;
    return Math.max(1, Math.floor(cap / this.live));
  }

  /** Records this instance as alive and counts the others (and forgets instances long gone). */
  async beat(): Promise<void> {
    if (!this.store.bus.shared) return;
    const now = this.now();
    await this.store.db
      .insertInto("instances")
      .values({ id: this.id, started_at: now, seen_at: now })
      .onConflict((oc) => oc.column("id").doUpdateSet({ seen_at: now }))
      .execute();
    const row = await this.store.db
      .selectFrom("instances")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("seen_at", ">", now - INSTANCE_STALE_MS)
      .executeTakeFirst();
    this.live = Math.max(1, Number(row?.n ?? 1));
    await this.store.db
      .deleteFrom("instances")
      .where("seen_at", "<", now - 60_000)
      .execute();
  }

  /** This instance stops (its share goes back to the others at once). */
  async leave(): Promise<void> {
    if (!this.store.bus.shared) return;
    await this.store.db.deleteFrom("instances").where("id", "=", this.id).execute();
  }
}
