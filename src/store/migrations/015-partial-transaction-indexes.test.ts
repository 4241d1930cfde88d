import { sql } from "kysely";
import { expect, it } from "vitest";
import { planOf } from "../../test-support/query-plan.js";
import { describeEachStore, suiteStore } from "../../test-support/stores.js";

describeEachStore("partial transaction indexes (migration 015)", (target) => {
  const opened = suiteStore(target);

  it("keep only rows that have a value, and the lookups by key and by transport still use them", async () => {
    const definitions =
      opened.store.kind === "postgres"
        ? (
            await sql<{ def: string }>`select indexdef as def from pg_indexes
              where indexname in ('transactions_idempotency_ref', 'transactions_transport_id')`.execute(
              opened.store.db,
            )
          ).rows
        : (
            await sql<{ def: string }>`select sql as def from sqlite_master
              where name in ('transactions_idempotency_ref', 'transactions_transport_id')`.execute(
              opened.store.db,
            )
          ).rows;
    expect(definitions).toHaveLength(2);
    for (const { def } of definitions) expect(def.toLowerCase()).toMatch(/where .*is not null/);

    const byKey = await planOf(
      opened.store,
      "select tx_hash from transactions where idempotency_ref = 'POST /transaction|k' order by created_at",
    );
    expect(byKey).toContain("transactions_idempotency_ref");
    const byTransport = await planOf(
      opened.store,
      "select tx_hash from transactions where transport_id = 't' and chain_id = 1002 and kind = 'transport_delivery'",
    );
    expect(byTransport).toContain("transactions_transport_id");
  });
});
