/** An in-progress Idempotency-Key holds a lease; each signed transaction names the key it was signed under. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("idempotency_keys").addColumn("lease_until", "bigint").execute();
  await db.schema.alterTable("transactions").addColumn("idempotency_ref", "text").execute();
  await db.schema
    .createIndex("transactions_idempotency_ref")
    .on("transactions")
    .column("idempotency_ref")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("transactions_idempotency_ref").execute();
  await db.schema.alterTable("transactions").dropColumn("idempotency_ref").execute();
  await db.schema.alterTable("idempotency_keys").dropColumn("lease_until").execute();
}
