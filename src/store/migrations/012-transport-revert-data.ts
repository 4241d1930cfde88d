/** The raw revert data of a refused delivery, kept beside the reason in words. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("transports").addColumn("revert_data", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("transports").dropColumn("revert_data").execute();
}
