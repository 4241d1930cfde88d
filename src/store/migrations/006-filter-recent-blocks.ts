/** Filters remember the blocks they delivered lately, so a reorg can be undone with removed: true. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("filters").addColumn("recent", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("filters").dropColumn("recent").execute();
}
