/** Members (the registry's mirror of who registered what), transports and the relayer's scan cursors. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("members")
    .addColumn("registry", "text", (c) => c.notNull())
    .addColumn("member_id", "bigint", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("tx_hash", "text", (c) => c.notNull())
    .addColumn("owner", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("members_pk", ["registry", "member_id"])
    .execute();
  await db.schema
    .createTable("transports")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("with_data", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("source_chain_id", "bigint", (c) => c.notNull())
    .addColumn("destination_chain_id", "bigint", (c) => c.notNull())
    .addColumn("sender", "text", (c) => c.notNull())
    .addColumn("recipient", "text", (c) => c.notNull())
    .addColumn("token", "text")
    .addColumn("amount", "text")
    .addColumn("token_id", "text")
    .addColumn("payload_hash", "text")
    .addColumn("body", "text")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("source_tx_hash", "text")
    .addColumn("source_block", "bigint")
    .addColumn("destination_tx_hash", "text")
    .addColumn("search_from_block", "bigint")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("lease_owner", "text")
    .addColumn("lease_until", "bigint")
    .addColumn("owner", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("delivered_at", "bigint")
    .execute();
  await db.schema
    .createIndex("transports_state")
    .on("transports")
    .columns(["state", "lease_until"])
    .execute();
  await db.schema.createIndex("transports_created").on("transports").columns(["created_at", "id"]).execute();
  await db.schema
    .createTable("relayer_cursors")
    .addColumn("chain_id", "bigint", (c) => c.notNull())
    .addColumn("endpoint", "text", (c) => c.notNull())
    .addColumn("next_block", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("relayer_cursors_pk", ["chain_id", "endpoint"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("relayer_cursors").execute();
  await db.schema.dropTable("transports").execute();
  await db.schema.dropTable("members").execute();
}
