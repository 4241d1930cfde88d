/** Resumable subscriptions: what a stream delivered lately, so a client may resume it on any instance. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("subscription_streams")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("criteria", "text", (c) => c.notNull())
    // JSON: the blocks delivered lately, newest last ({n, h, logs?}), for reorgs across a resume.
    .addColumn("recent", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("subscription_streams_updated")
    .on("subscription_streams")
    .column("updated_at")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("subscription_streams").execute();
}
