/** Per-key slots held across instances (WebSockets) where a cap is smaller than the instances sharing it: a shared count, not a share each. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("held_slots")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("instance_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  // The count a take makes: a key's slots of one kind.
  await db.schema.createIndex("held_slots_owner").on("held_slots").columns(["kind", "owner"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("held_slots").execute();
}
