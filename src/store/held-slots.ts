/** Per-key slots (WebSockets) on a shared store, held as one count in the store: never more than the cap over the cluster. */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Store } from "./database.js";
import { INSTANCE_STALE_MS, type InstanceRegistry } from "./instance-registry.js";

/**
 * Each instance enforcing its share of a cap (`InstanceRegistry.share`) rounds a share below one up
 * to one (a cap of 2 over 3 instances allowed 3). Slots held for long (a WebSocket) are counted
 * here instead, on any shared store: a slot is a row held by an instance, counted while its
 * instance is alive, taken under a lock on the key so two instances cannot both take the last one.
 * One round trip per slot taken; requests per second stay with the shares.
 */
export class HeldSlots {
  constructor(
    private readonly store: Store,
    private readonly registry: InstanceRegistry,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `cap` is counted here: a cap, on a store other instances may share. */
  shared(cap: number): boolean {
    return this.store.bus.shared && cap > 0;
  }

  /** Takes a slot of `kind` for `owner` when the live instances hold fewer than `cap`: its release, or undefined. */
  async take(kind: string, owner: string, cap: number): Promise<(() => Promise<void>) | undefined> {
    const id = randomUUID();
    const taken = await this.store.db.transaction().execute(async (trx) => {
      if (this.store.kind === "postgres")
        await sql`select pg_advisory_xact_lock(hashtext(${`held_slots:${kind}:${owner}`}))`.execute(trx);
      const row = await trx
        .selectFrom("held_slots")
        .innerJoin("instances", "instances.id", "held_slots.instance_id")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("held_slots.kind", "=", kind)
        .where("held_slots.owner", "=", owner)
        .where("instances.seen_at", ">", this.now() - INSTANCE_STALE_MS)
        .executeTakeFirst();
      if (Number(row?.n ?? 0) >= cap) return false;
      await trx
        .insertInto("held_slots")
        .values({ id, kind, owner, instance_id: this.registry.id, created_at: this.now() })
        .execute();
      return true;
    });
    if (!taken) return undefined;
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.store.db.deleteFrom("held_slots").where("id", "=", id).execute();
    };
  }

  /** Slots of instances gone (a crash): they no longer count, and are removed. */
  async prune(): Promise<void> {
    await this.store.db
      .deleteFrom("held_slots")
      .where("instance_id", "not in", (eb) =>
        eb
          .selectFrom("instances")
          .select("id")
          .where("seen_at", ">", this.now() - INSTANCE_STALE_MS),
      )
      .execute();
  }
}
