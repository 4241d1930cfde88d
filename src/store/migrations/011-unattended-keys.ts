/** Keys of unattended wallets, sealed under the operator's server key (which is never stored here). */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("unattended_keys")
    .addColumn("wallet_id", "text", (c) => c.notNull())
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("sealed", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("unattended_keys_pk", ["wallet_id", "idx"])
    .execute();
  await db.schema.createIndex("unattended_keys_address").on("unattended_keys").column("address").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("unattended_keys").execute();
}
