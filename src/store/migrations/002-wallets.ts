/** Custody wallets and their addresses (keystore v3 documents; nothing in clear). */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("wallets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("kdf", "text", (c) => c.notNull())
    .addColumn("sealed_seed", "text")
    .addColumn("address_count", "integer", (c) => c.notNull())
    .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("locked_until", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("owner", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("wallet_addresses")
    .addColumn("wallet_id", "text", (c) => c.notNull().references("wallets.id").onDelete("cascade"))
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("keystore", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("wallet_addresses_pk", ["wallet_id", "idx"])
    .execute();
  await db.schema.createIndex("wallet_addresses_address").on("wallet_addresses").column("address").execute();
  await db.schema
    .createIndex("wallets_owner_created")
    .on("wallets")
    .columns(["owner", "created_at"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("wallet_addresses").execute();
  await db.schema.dropTable("wallets").execute();
}
