/** Migration 030: the audit log has no primary key beside its (created_at, id) order, and keeps every entry across the rebuild. */
import { type MigrationProvider, Migrator, sql } from "kysely";
import { expect, it } from "vitest";
import { planOf } from "../../test-support/query-plan.js";
import { describeEachStore, suiteStore } from "../../test-support/stores.js";
import type { Store } from "../database.js";
import type { AuditLogTable } from "../schema.js";
import { MIGRATIONS } from "./index.js";

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

const entry = (id: string, createdAt: number, apiKeyId: string | null): AuditLogTable => ({
  id,
  created_at: createdAt,
  api_key_id: apiKeyId,
  wallet_id: "w1",
  address: "0x01",
  chain_id: 1001,
  operation: "transaction",
  to_address: "0x02",
  value: "7",
  token: null,
  token_amount: null,
  selector: null,
  decision: "allowed",
  rule: null,
  policy_id: null,
  tx_hash: `0x${id}`,
  detail: JSON.stringify({ n: createdAt }),
});

/** The audit log's indexes, by name (SQLite's own for a primary key included). */
async function indexesOf(store: Store): Promise<string[]> {
  const query =
    store.kind === "postgres"
      ? sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'audit_log'`
      : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'audit_log'`;
  return (await query.execute(store.db)).rows.map((row) => row.name).sort();
}

describeEachStore("the audit log's one order (migration 030)", (target) => {
  const opened = suiteStore(target);

  it("writes the table and two indexes an entry: no primary key of its own", async () => {
    expect(await indexesOf(opened.store)).toEqual(["audit_log_key", "audit_log_time"]);
  });

  it("lists newest first through audit_log_time without a sort, and (created_at, id) names one entry", async () => {
    const plan = await planOf(
      opened.store,
      "select * from audit_log order by created_at desc, id desc limit 100",
    );
    expect(plan).toContain("audit_log_time");
    expect(plan).not.toMatch(/TEMP B-TREE|Sort/);
    const db = opened.store.db;
    await db
      .insertInto("audit_log")
      .values(entry("a", 1, null))
      .execute();
    await expect(
      db
        .insertInto("audit_log")
        .values(entry("a", 1, "k"))
        .execute(),
    ).rejects.toThrow();
    await db.deleteFrom("audit_log").execute();
  });

  it("keeps every entry, its fields and its order when it rebuilds the table, and back", async () => {
    const db = opened.store.db;
    const migrator = new Migrator({ db, provider });
    expect((await migrator.migrateTo("029-hash-lookups-by-sender")).error).toBeUndefined();
    expect(await indexesOf(opened.store)).toHaveLength(3);
    const written = [entry("b", 2, "k1"), entry("c", 2, null), entry("a", 5, "k1")];
    await db.insertInto("audit_log").values(written).execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const ordered = () =>
      db.selectFrom("audit_log").selectAll().orderBy("created_at").orderBy("id").execute();
    const kept = (await ordered()).map((row) => ({ ...row, created_at: Number(row.created_at) }));
    expect(kept).toEqual([written[0], written[1], written[2]]);
    expect(await indexesOf(opened.store)).toEqual(["audit_log_key", "audit_log_time"]);
    // Down again: the primary key is back, and refuses a second entry with an id already used.
    expect((await migrator.migrateTo("029-hash-lookups-by-sender")).error).toBeUndefined();
    expect(await ordered()).toHaveLength(3);
    await expect(
      db
        .insertInto("audit_log")
        .values(entry("a", 9, null))
        .execute(),
    ).rejects.toThrow();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    expect(await ordered()).toHaveLength(3);
    await db.deleteFrom("audit_log").execute();
  });
});
