/** EIP-5792 call bundles: which transactions wallet_sendCalls sent for a tenant's bundle id. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("call_bundles")
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("from_address", "text", (c) => c.notNull())
    .addColumn("tx_hashes", "text", (c) => c.notNull())
    .addColumn("calls", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("call_bundles_pk", ["owner", "id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("call_bundles").execute();
}
