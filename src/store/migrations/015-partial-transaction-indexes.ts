/** The transactions' idempotency and transport columns are empty for most rows: their indexes keep only the rows that have one. */
import type { Kysely } from "kysely";

/**
 * Every signed transaction was entered in both indexes, though only requests sent with an
 * Idempotency-Key and transport legs have a value there (#17): two more B-trees written per row,
 * and more pages per commit. The lookups are equalities (`idempotency_ref = ?`, `transport_id = ?`),
 * which both SQLite and PostgreSQL know to imply `IS NOT NULL`, so they still use the indexes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("transactions_idempotency_ref").execute();
  await db.schema
    .createIndex("transactions_idempotency_ref")
    .on("transactions")
    .column("idempotency_ref")
    .where("idempotency_ref", "is not", null)
    .execute();
  await db.schema.dropIndex("transactions_transport_id").execute();
  await db.schema
    .createIndex("transactions_transport_id")
    .on("transactions")
    .columns(["transport_id", "chain_id"])
    .where("transport_id", "is not", null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("transactions_idempotency_ref").execute();
  await db.schema
    .createIndex("transactions_idempotency_ref")
    .on("transactions")
    .column("idempotency_ref")
    .execute();
  await db.schema.dropIndex("transactions_transport_id").execute();
  await db.schema
    .createIndex("transactions_transport_id")
    .on("transactions")
    .columns(["transport_id", "chain_id"])
    .execute();
}
