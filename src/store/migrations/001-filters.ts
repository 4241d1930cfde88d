/** Gateway-owned filters. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("filters")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("chain_id", "bigint", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("criteria", "text")
    .addColumn("cursor_block", "bigint", (c) => c.notNull())
    .addColumn("cursor_hash", "text")
    .addColumn("node_filter_id", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_poll_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("filters_last_poll_at").on("filters").column("last_poll_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("filters").execute();
}
