/** Signed operations: the nonce ledger, every transaction chaingate signs, and idempotency keys. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("nonce_ledger")
    .addColumn("chain_id", "bigint", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("next_nonce", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("nonce_ledger_pk", ["chain_id", "address"])
    .execute();
  await db.schema
    .createTable("transactions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("chain_id", "bigint", (c) => c.notNull())
    .addColumn("wallet_id", "text")
    .addColumn("address_index", "integer")
    .addColumn("from_address", "text", (c) => c.notNull())
    .addColumn("to_address", "text")
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("nonce", "bigint", (c) => c.notNull())
    .addColumn("gas_limit", "text", (c) => c.notNull())
    .addColumn("max_fee_per_gas", "text")
    .addColumn("max_priority_fee_per_gas", "text")
    .addColumn("gas_price", "text")
    .addColumn("raw", "text", (c) => c.notNull())
    .addColumn("tx_hash", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("replaced_by", "text")
    .addColumn("replaces", "text")
    .addColumn("block_number", "bigint")
    .addColumn("block_hash", "text")
    .addColumn("error", "text")
    .addColumn("revert_data", "text")
    .addColumn("broadcasts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("metadata", "text")
    .addColumn("owner", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("sent_at", "bigint")
    .execute();
  await db.schema.createIndex("transactions_hash").on("transactions").column("tx_hash").execute();
  await db.schema
    .createIndex("transactions_state")
    .on("transactions")
    .columns(["state", "chain_id"])
    .execute();
  await db.schema
    .createIndex("transactions_sender_nonce")
    .on("transactions")
    .columns(["chain_id", "from_address", "nonce"])
    .execute();
  await db.schema
    .createIndex("transactions_created")
    .on("transactions")
    .columns(["created_at", "id"])
    .execute();
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("route", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("response_body", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["route", "key"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("idempotency_keys").execute();
  await db.schema.dropTable("transactions").execute();
  await db.schema.dropTable("nonce_ledger").execute();
}
