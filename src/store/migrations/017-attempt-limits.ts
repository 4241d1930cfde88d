/** Password attempts counted apart from a wallet's own: an admin opening another tenant's wallet. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("attempt_limits")
    // "<admin key id>:<wallet id>": each admin has its own allowance on each wallet.
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("failed_attempts", "integer", (c) => c.notNull())
    .addColumn("locked_until", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("attempt_limits").execute();
}
