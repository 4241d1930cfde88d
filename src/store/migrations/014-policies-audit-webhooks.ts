/** Signing policies with their rolling spends, the append-only audit log, and the webhook outbox. */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("policies")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("wallet_id", "text")
    .addColumn("api_key_id", "text")
    .addColumn("rules", "text", (c) => c.notNull())
    .addColumn("created_by", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("policies_wallet").on("policies").column("wallet_id").execute();
  await db.schema.createIndex("policies_api_key").on("policies").column("api_key_id").execute();

  await db.schema
    .createTable("policy_spends")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("asset", "text", (c) => c.notNull())
    .addColumn("amount", "text", (c) => c.notNull())
    .addColumn("tx_id", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("policy_spends_window")
    .on("policy_spends")
    .columns(["chain_id", "address", "asset", "created_at"])
    .execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("api_key_id", "text")
    .addColumn("wallet_id", "text")
    .addColumn("address", "text")
    .addColumn("chain_id", "integer")
    .addColumn("operation", "text", (c) => c.notNull())
    .addColumn("to_address", "text")
    .addColumn("value", "text")
    .addColumn("token", "text")
    .addColumn("token_amount", "text")
    .addColumn("selector", "text")
    .addColumn("decision", "text", (c) => c.notNull())
    .addColumn("rule", "text")
    .addColumn("policy_id", "text")
    .addColumn("tx_hash", "text")
    .addColumn("detail", "text")
    .execute();
  await db.schema.createIndex("audit_log_time").on("audit_log").columns(["created_at", "id"]).execute();
  await db.schema
    .createIndex("audit_log_key")
    .on("audit_log")
    .columns(["api_key_id", "created_at"])
    .execute();

  await db.schema
    .createTable("webhooks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner", "text")
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhooks_owner").on("webhooks").column("owner").execute();

  await db.schema
    .createTable("webhook_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner", "text")
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("order_key", "text", (c) => c.notNull())
    .addColumn("order_seq", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("webhook_events_order")
    .on("webhook_events")
    .columns(["order_key", "order_seq"])
    .execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("webhook_id", "text", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("order_key", "text", (c) => c.notNull())
    .addColumn("order_seq", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("lease_owner", "text")
    .addColumn("lease_until", "bigint")
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("delivered_at", "bigint")
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due")
    .on("webhook_deliveries")
    .columns(["state", "next_attempt_at"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_order")
    .on("webhook_deliveries")
    .columns(["webhook_id", "order_key", "order_seq"])
    .execute();

  await db.schema
    .createTable("balance_alerts")
    .addColumn("wallet_id", "text", (c) => c.notNull())
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("below", "text", (c) => c.notNull())
    .addColumn("owner", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("balance_alerts_pk", ["wallet_id", "chain_id"])
    .execute();
  await db.schema
    .createTable("balance_alert_state")
    .addColumn("wallet_id", "text", (c) => c.notNull())
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("low", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("balance_alert_state_pk", ["wallet_id", "chain_id", "address"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "balance_alert_state",
    "balance_alerts",
    "webhook_deliveries",
    "webhook_events",
    "webhooks",
    "audit_log",
    "policy_spends",
    "policies",
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
