/** Unlocks as cluster state: every instance on the store signs for an unlocked address until it ends, and a lock ends it everywhere. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("unlocks")
    // The tenant ('' in keyless mode) and the address (lower case).
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("wallet_id", "text", (c) => c.notNull())
    .addColumn("idx", "integer", (c) => c.notNull())
    // The private key sealed under the server key, bound to owner, address and end; null without a
    // server key (the row then only tells other instances that a lock must reach them).
    .addColumn("sealed", "text")
    .addColumn("key_id", "text")
    .addColumn("until", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("unlocks_pk", ["owner", "address"])
    .execute();
  await db.schema.createIndex("unlocks_wallet").on("unlocks").column("wallet_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("unlocks").execute();
}
