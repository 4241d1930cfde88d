/** What the relayer learnt before moving value: the quorum-confirmed source block, when to look again, and per-lane limits. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // The source block's hash as a quorum of upstreams confirmed it, and how many did.
  await db.schema.alterTable("transports").addColumn("source_block_hash", "text").execute();
  await db.schema.alterTable("transports").addColumn("source_confirmations", "integer").execute();
  // A held transport (disputed, reorged, queued on its lane) is looked at again from this time.
  await db.schema.alterTable("transports").addColumn("next_check_at", "bigint").execute();
  // Queued on a lane limit: delivered from release_at; refunded at refund_at when that comes first.
  await db.schema.alterTable("transports").addColumn("release_at", "bigint").execute();
  await db.schema.alterTable("transports").addColumn("refund_at", "bigint").execute();

  await db.schema
    .createTable("lane_limits")
    .addColumn("source_chain_id", "integer", (c) => c.notNull())
    .addColumn("destination_chain_id", "integer", (c) => c.notNull())
    .addColumn("token", "text", (c) => c.notNull())
    // Decimal strings in the token's base units (ERC721: token count).
    .addColumn("capacity", "text", (c) => c.notNull())
    .addColumn("period_ms", "bigint", (c) => c.notNull())
    .addColumn("refund_after_ms", "bigint")
    // The bucket: what may still cross now (negative while queued transports wait), as of level_at.
    .addColumn("level", "text", (c) => c.notNull())
    .addColumn("level_at", "bigint", (c) => c.notNull())
    .addColumn("created_by", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("lane_limits_pk", ["source_chain_id", "destination_chain_id", "token"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("lane_limits").execute();
  for (const column of [
    "refund_at",
    "release_at",
    "next_check_at",
    "source_confirmations",
    "source_block_hash",
  ])
    await db.schema.alterTable("transports").dropColumn(column).execute();
}
