/** Table types of policies, the audit log, webhooks and balance alerts (the rest of the store is in schema.ts). */

export interface PoliciesTable {
  id: string;
  name: string;
  /** The wallet it binds, or null; with api_key_id null too it would bind nothing, which is refused. */
  wallet_id: string | null;
  api_key_id: string | null;
  /** JSON of the rules (policies/policy-rules.ts). */
  rules: string;
  created_by: string | null;
  created_at: number;
}

/** What an address sent, counted for the rolling 24 h limits; written with the transaction it counts. */
export interface PolicySpendsTable {
  id: string;
  chain_id: number;
  /** Lowercase. */
  address: string;
  /** "native" or a token contract (lowercase). */
  asset: string;
  /** Decimal string (wei or token units). */
  amount: string;
  /** The transaction it belongs to; null for a signature handed back unsent (eth_signTransaction). */
  tx_id: string | null;
  /** The wallet and API key it was signed under (null: no wallet, keyless mode, or before migration 018). */
  wallet_id: string | null;
  api_key_id: string | null;
  created_at: number;
}

export type AuditDecision = "allowed" | "denied" | "change";

/** Append-only: one row per signing decision and per policy or key change. */
export interface AuditLogTable {
  id: string;
  created_at: number;
  api_key_id: string | null;
  wallet_id: string | null;
  address: string | null;
  chain_id: number | null;
  operation: string;
  to_address: string | null;
  value: string | null;
  token: string | null;
  token_amount: string | null;
  selector: string | null;
  decision: AuditDecision;
  rule: string | null;
  policy_id: string | null;
  tx_hash: string | null;
  detail: string | null;
}

export interface WebhooksTable {
  id: string;
  owner: string | null;
  url: string;
  /** JSON array of event types (or prefixes ending in "*"). */
  events: string;
  secret: string;
  created_at: number;
}

/** The outbox: written in the database transaction of the state change it reports. */
export interface WebhookEventsTable {
  id: string;
  owner: string | null;
  type: string;
  data: string;
  /** Events with one key (a transaction, a transport) are delivered in order_seq order. */
  order_key: string;
  order_seq: number;
  created_at: number;
  /** The W3C traceparent of the change it reports (a transaction's): its deliveries join that trace. */
  trace_parent: string | null;
}

export type DeliveryState = "pending" | "delivered" | "failed";

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  order_key: string;
  order_seq: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export interface BalanceAlertsTable {
  wallet_id: string;
  chain_id: number;
  /** Wei, decimal: an address of the wallet below this raises wallet.balance_low once. */
  below: string;
  owner: string | null;
  created_at: number;
}

export interface BalanceAlertStateTable {
  wallet_id: string;
  chain_id: number;
  address: string;
  /** 1 while the address is below the threshold (the event was raised), 0 otherwise. */
  low: number;
}
