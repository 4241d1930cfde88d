/** A token transport the destination refused is cancelled there and refunded at the source; these say how far that got. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("transports").addColumn("refund_state", "text").execute();
  await db.schema.alterTable("transports").addColumn("refund_tx_hash", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("transports").dropColumn("refund_tx_hash").execute();
  await db.schema.alterTable("transports").dropColumn("refund_state").execute();
}
