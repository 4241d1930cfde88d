/** Which SQL a Kysely instance (or a transaction of it) speaks, read off its adapter: for the few statements written for one store. */
import { type Kysely, PostgresAdapter } from "kysely";
import type { Database } from "./schema.js";

/** Whether `db` runs on PostgreSQL (else SQLite). */
export function onPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
