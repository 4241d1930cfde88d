/** A filter belongs to the tenant that installed it: only it may poll or uninstall it, and its count is capped. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("filters").addColumn("owner", "text").execute();
  await db.schema.createIndex("filters_owner").on("filters").column("owner").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("filters_owner").execute();
  await db.schema.alterTable("filters").dropColumn("owner").execute();
}
