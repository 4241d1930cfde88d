/** The W3C traceparent a transaction and a webhook event were made under, so any instance continues their trace. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("transactions").addColumn("trace_parent", "text").execute();
  await db.schema.alterTable("webhook_events").addColumn("trace_parent", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("webhook_events").dropColumn("trace_parent").execute();
  await db.schema.alterTable("transactions").dropColumn("trace_parent").execute();
}
