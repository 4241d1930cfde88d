/** Claiming an Idempotency-Key and holding it: the first request takes it, a holder renews its lease, a lapsed lease is resolved from the transactions signed under it. */
import { ChaingateError } from "../errors/chaingate-error.js";
import type { Store } from "../store/database.js";
import { type IdempotencyStart, interrupted, type Recover } from "./replay.js";
import { checkKey } from "./request-identity.js";

/** The reference transactions signed under a key are stored with. */
export const refOf = (route: string, key: string): string => `${route}\n${key}`;

/** How long an in-progress key is held without a renewal; the holder renews it every third of that. */
export const IDEMPOTENCY_LEASE_MS = 10_000;

export class KeyLeases {
  /** Keys this process is working on; their leases are renewed while it does. */
  private readonly held = new Map<string, { route: string; key: string }>();
  private renewer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly leaseMs: number = IDEMPOTENCY_LEASE_MS,
  ) {}

  async begin(
    route: string,
    key: string,
    hash: string,
    recover: Recover = interrupted,
  ): Promise<IdempotencyStart> {
    checkKey(key);
    const db = this.store.db;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.now();
      const inserted = await db
        .insertInto("idempotency_keys")
        .values({
          route,
          key,
          request_hash: hash,
          status: "in_progress",
          response_status: null,
          response_body: null,
          created_at: now,
          lease_until: now + this.leaseMs,
        })
        .onConflict((oc) => oc.columns(["route", "key"]).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { kind: "new" };
      const row = await db
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("route", "=", route)
        .where("key", "=", key)
        .executeTakeFirst();
      if (!row) continue;
      if (row.request_hash !== hash) {
        throw new ChaingateError("Idempotency-Key was already used with a different request body", {
          code: "IDEMPOTENCY_KEY_REUSED",
        });
      }
      if (row.status === "done") {
        return {
          kind: "replay",
          status: row.response_status ?? 200,
          body: JSON.parse(row.response_body ?? "null"),
        };
      }
      const leaseUntil = row.lease_until ?? row.created_at + this.leaseMs;
      if (leaseUntil > now) {
        throw new ChaingateError("A request with this Idempotency-Key is still in progress", {
          code: "IDEMPOTENCY_IN_PROGRESS",
          data: { retry_after_ms: leaseUntil - now },
        });
      }
      // The holder stopped renewing (it crashed): the transactions tell what it got done.
      const signed = await this.signedUnder(route, key);
      if (signed.length > 0) {
        const answer = recover(signed);
        await this.finish(route, key, answer.status, answer.body);
        return { kind: "replay", ...answer };
      }
      // Nothing was signed: the work never started, so this request takes the key over.
      const taken = await db
        .updateTable("idempotency_keys")
        .set({ lease_until: now + this.leaseMs })
        .where("route", "=", route)
        .where("key", "=", key)
        .where("status", "=", "in_progress")
        .where("lease_until", row.lease_until === null ? "is" : "=", row.lease_until)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { kind: "new" };
    }
    throw new ChaingateError("A request with this Idempotency-Key is still in progress", {
      code: "IDEMPOTENCY_IN_PROGRESS",
    });
  }

  /** Hashes of the transactions a request under this key signed that a chain may have (oldest first). */
  async signedUnder(route: string, key: string): Promise<string[]> {
    const rows = await this.store.db
      .selectFrom("transactions")
      .select(["tx_hash", "state", "block_number"])
      .where("idempotency_ref", "=", refOf(route, key))
      .orderBy("created_at")
      .execute();
    return rows.filter((r) => r.state !== "failed" || r.block_number !== null).map((r) => r.tx_hash);
  }

  async finish(route: string, key: string, status: number, body: unknown): Promise<void> {
    await this.store.db
      .updateTable("idempotency_keys")
      .set({
        status: "done",
        response_status: status,
        response_body: JSON.stringify(body),
        lease_until: null,
      })
      .where("route", "=", route)
      .where("key", "=", key)
      .execute();
  }

  /**
   * Forgets a key whose request changed nothing, so the client may retry with it. When something was
   * signed after all (the error came later, e.g. the database dropped), the key keeps that answer.
   */
  async abandon(route: string, key: string, recover: Recover = interrupted): Promise<void> {
    const signed = await this.signedUnder(route, key);
    if (signed.length > 0) {
      const answer = recover(signed);
      await this.finish(route, key, answer.status, answer.body);
      return;
    }
    await this.store.db
      .deleteFrom("idempotency_keys")
      .where("route", "=", route)
      .where("key", "=", key)
      .execute();
  }

  hold(route: string, key: string): () => void {
    const id = refOf(route, key);
    this.held.set(id, { route, key });
    this.renewer ??= setInterval(() => void this.renew(), Math.max(10, this.leaseMs / 3));
    this.renewer.unref();
    return () => {
      this.held.delete(id);
      if (this.held.size === 0 && this.renewer !== undefined) {
        clearInterval(this.renewer);
        this.renewer = undefined;
      }
    };
  }

  private async renew(): Promise<void> {
    const byRoute = new Map<string, string[]>();
    for (const { route, key } of this.held.values()) byRoute.set(route, [...(byRoute.get(route) ?? []), key]);
    const until = this.now() + this.leaseMs;
    for (const [route, keys] of byRoute) {
      await this.store.db
        .updateTable("idempotency_keys")
        .set({ lease_until: until })
        .where("route", "=", route)
        .where("key", "in", keys)
        .where("status", "=", "in_progress")
        .execute()
        // A missed renewal is retried on the next beat; the lease is three beats long.
        .catch(() => {});
    }
  }
}
