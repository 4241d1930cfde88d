import { expect, it } from "vitest";
import { newDelivery } from "../webhooks/outbox.js";
import { openStore } from "./database.js";
import { DELIVERIES_KEPT_MS, pruneHistory, SPENDS_KEPT_MS } from "./prune-history.js";

it("prunes spends past the window and settled deliveries past the log's retention, nothing that still counts", async () => {
  const store = await openStore({ kind: "sqlite", path: ":memory:" });
  try {
    const now = 10 * DELIVERIES_KEPT_MS;
    const spend = (id: string, age: number) => ({
      id,
      chain_id: 1,
      address: "0xa",
      asset: "native",
      amount: "1",
      tx_id: null,
      created_at: now - age,
    });
    await store.db
      .insertInto("policy_spends")
      .values([spend("old", SPENDS_KEPT_MS + 1), spend("in-window", 23 * 3_600_000)])
      .execute();
    const event = (id: string, age: number) => ({
      id,
      owner: null,
      type: "transaction.sent",
      data: "{}",
      order_key: `tx:${id}`,
      order_seq: 1,
      created_at: now - age,
    });
    const old = now - DELIVERIES_KEPT_MS - 1;
    await store.db
      .insertInto("webhook_events")
      .values([
        event("e-old", DELIVERIES_KEPT_MS + 1),
        event("e-pending", DELIVERIES_KEPT_MS + 1),
        event("e-new", 1),
      ])
      .execute();
    await store.db
      .insertInto("webhook_deliveries")
      .values([
        { ...newDelivery("w", "e-old", "tx:e-old", 1, old), id: "d-old", state: "delivered" as const },
        // Still pending (an endpoint that was down for a month): kept, with its event.
        { ...newDelivery("w", "e-pending", "tx:e-pending", 1, old), id: "d-pending" },
        { ...newDelivery("w", "e-new", "tx:e-new", 1, now - 1), id: "d-new", state: "delivered" as const },
      ])
      .execute();

    expect(await pruneHistory(store, now)).toEqual({ spends: 1, deliveries: 1, events: 1 });
    expect((await store.db.selectFrom("policy_spends").select("id").execute()).map((r) => r.id)).toEqual([
      "in-window",
    ]);
    expect(
      (await store.db.selectFrom("webhook_deliveries").select("id").orderBy("id").execute()).map((r) => r.id),
    ).toEqual(["d-new", "d-pending"]);
    expect(
      (await store.db.selectFrom("webhook_events").select("id").orderBy("id").execute()).map((r) => r.id),
    ).toEqual(["e-new", "e-pending"]);
  } finally {
    await store.close();
  }
});
