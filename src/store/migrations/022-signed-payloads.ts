/** Bytes signed by eth_signTransaction (handed out, not sent): the one payload each (chain, address, nonce) may carry. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("signed_payloads")
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("nonce", "bigint", (c) => c.notNull())
    .addColumn("tx_hash", "text", (c) => c.notNull())
    .addColumn("raw", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("signed_payloads_pk", ["chain_id", "address", "nonce"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("signed_payloads").execute();
}
