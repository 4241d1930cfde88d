/** Pending-transaction hashes seen on any upstream, in the order first seen: what pending filters read. */
import { type Kysely, sql } from "kysely";

async function isPostgres(db: Kysely<unknown>): Promise<boolean> {
  try {
    await sql`select 1 from pg_catalog.pg_class limit 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = await isPostgres(db);
  await db.schema
    .createTable("pending_transactions")
    .addColumn("seq", postgres ? "bigserial" : "integer", (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("chain_id", "bigint", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("seen_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("pending_transactions_chain_hash", ["chain_id", "hash"])
    .execute();
  await db.schema
    .createIndex("pending_transactions_seen")
    .on("pending_transactions")
    .columns(["seen_at"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("pending_transactions").execute();
}
