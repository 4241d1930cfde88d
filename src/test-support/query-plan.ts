/** The plan a store would run a query with, for tests that check which index a query uses. */
import { sql } from "kysely";
import type { Store } from "../store/database.js";

/** The plan the store would run `query` with (index scans preferred on PostgreSQL, whose tiny test table would be read whole). */
export async function planOf(store: Store, query: string): Promise<string> {
  return store.db.transaction().execute(async (trx) => {
    if (store.kind === "postgres") {
      await sql`set local enable_seqscan = off`.execute(trx);
      const rows = await sql<{ "QUERY PLAN": string }>`${sql.raw(`explain ${query}`)}`.execute(trx);
      return rows.rows.map((r) => r["QUERY PLAN"]).join("\n");
    }
    const rows = await sql<{ detail: string }>`${sql.raw(`explain query plan ${query}`)}`.execute(trx);
    return rows.rows.map((r) => r.detail).join("\n");
  });
}
