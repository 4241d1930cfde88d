/** Which instance made an unlock: one made without a server key holds there only, and only while that instance lives. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("unlocks").addColumn("instance_id", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("unlocks").dropColumn("instance_id").execute();
}
