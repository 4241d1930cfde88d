/** The transport a transaction belongs to gets its own indexed column (it was only inside `metadata`). */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("transactions").addColumn("transport_id", "text").execute();
  await db.schema
    .createIndex("transactions_transport_id")
    .on("transactions")
    .columns(["transport_id", "chain_id"])
    .execute();
  // Rows written before this column: their metadata names the transport. Read in JavaScript, as
  // SQLite and PostgreSQL spell JSON access differently; there are few such rows.
  const rows = await sql<{ id: string; metadata: string }>`
    select id, metadata from transactions where metadata like ${'%"transport_id"%'}`.execute(db);
  for (const row of rows.rows) {
    const id = (JSON.parse(row.metadata) as { transport_id?: unknown }).transport_id;
    if (typeof id !== "string") continue;
    await sql`update transactions set transport_id = ${id} where id = ${row.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("transactions_transport_id").execute();
  await db.schema.alterTable("transactions").dropColumn("transport_id").execute();
}
