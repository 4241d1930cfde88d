/** What is kept, and for how long: spends past the rolling window, and settled webhook deliveries past their log's retention. */
import type { Store } from "./database.js";

/** Spends older than this can no longer count against a 24 h limit (a day's margin for clock skew). */
export const SPENDS_KEPT_MS = 48 * 3_600_000;
/** Delivered or given-up deliveries (and events left with none) stay in the delivery log this long. */
export const DELIVERIES_KEPT_MS = 30 * 24 * 3_600_000;

/** Deletes what no rule reads any more; the audit log is never pruned (it is the operator's to archive). */
export async function pruneHistory(
  store: Store,
  now = Date.now(),
): Promise<{ spends: number; deliveries: number; events: number }> {
  const spends = await store.db
    .deleteFrom("policy_spends")
    .where("created_at", "<", now - SPENDS_KEPT_MS)
    .executeTakeFirst();
  const deliveries = await store.db
    .deleteFrom("webhook_deliveries")
    .where("state", "in", ["delivered", "failed"])
    .where("created_at", "<", now - DELIVERIES_KEPT_MS)
    .executeTakeFirst();
  const events = await store.db
    .deleteFrom("webhook_events")
    .where("created_at", "<", now - DELIVERIES_KEPT_MS)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("webhook_deliveries")
            .select("webhook_deliveries.id")
            .whereRef("webhook_deliveries.event_id", "=", "webhook_events.id"),
        ),
      ),
    )
    .executeTakeFirst();
  return {
    spends: Number(spends.numDeletedRows),
    deliveries: Number(deliveries.numDeletedRows),
    events: Number(events.numDeletedRows),
  };
}
