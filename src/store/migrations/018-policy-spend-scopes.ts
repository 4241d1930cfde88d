/** Spends carry the wallet and API key they were made under, so a policy's rolling limit can count its whole scope. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("policy_spends").addColumn("wallet_id", "text").execute();
  await db.schema.alterTable("policy_spends").addColumn("api_key_id", "text").execute();
  await db.schema
    .createIndex("policy_spends_wallet_window")
    .on("policy_spends")
    .columns(["wallet_id", "asset", "created_at"])
    .execute();
  await db.schema
    .createIndex("policy_spends_key_window")
    .on("policy_spends")
    .columns(["api_key_id", "asset", "created_at"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("policy_spends_key_window").execute();
  await db.schema.dropIndex("policy_spends_wallet_window").execute();
  await db.schema.alterTable("policy_spends").dropColumn("api_key_id").execute();
  await db.schema.alterTable("policy_spends").dropColumn("wallet_id").execute();
}
