/** Table types for Kysely: the one description of what the store holds (policies, audit and webhooks in schema-policies.ts). */
import type { Generated } from "kysely";
import type {
  AuditLogTable,
  BalanceAlertStateTable,
  BalanceAlertsTable,
  PoliciesTable,
  PolicySpendsTable,
  WebhookDeliveriesTable,
  WebhookEventsTable,
  WebhooksTable,
} from "./schema-policies.js";

export type * from "./schema-policies.js";

export interface FiltersTable {
  id: string;
  chain_id: number;
  kind: "block" | "log" | "pending";
  /** JSON of the normalised log filter criteria; null for block and pending filters. */
  criteria: string | null;
  /** Last block whose changes were delivered; the next poll starts after it. */
  cursor_block: number;
  cursor_hash: string | null;
  /** Pending-transaction filters are backed by a node filter until the gateway tracks the mempool itself. */
  node_filter_id: string | null;
  created_at: number;
  last_poll_at: number;
  /**
   * JSON `[{n, h, logs?}]`: the blocks delivered lately (within REORG_WINDOW of the cursor), with the
   * logs a log filter returned from each, so that blocks a reorg replaced can be taken back.
   */
  recent: string | null;
  /** The tenant (API key id, or `ip:<address>` without keys) that installed it. */
  owner: string | null;
}

export interface WalletsTable {
  id: string;
  type: "KEYSTORE_V3" | "PKCS11";
  /** generated (new seed), mnemonic (imported seed), keystore (one imported key, no seed), pkcs11 (keys on a token). */
  source: "generated" | "mnemonic" | "keystore" | "pkcs11";
  /** JSON of the wallet's KDF parameters (one salt for all its keystores). */
  kdf: string;
  /** JSON of the seed's entropy sealed with the wallet's derived key; null for keystore imports. */
  sealed_seed: string | null;
  address_count: number;
  failed_attempts: number;
  /** Epoch ms until which unlock attempts are refused without trying the password. */
  locked_until: number;
  /** The API key (tenant) that created the wallet; null when keys are not in use. */
  owner: string | null;
  created_at: number;
}

export interface WalletAddressesTable {
  wallet_id: string;
  idx: number;
  address: string;
  public_key: string;
  /** Standalone keystore v3 JSON for this address's key; for a PKCS11 wallet, where the key is on the token ({pkcs11, token, key_id, label}). */
  keystore: string;
  created_at: number;
}

export interface NonceLedgerTable {
  chain_id: number;
  address: string;
  /** The next nonce to hand out for (chain, address). */
  next_nonce: number;
}

/** queued: signed and stored, not yet accepted by a node; sent: in a node's pool; then mined/confirmed. */
export type TxState = "queued" | "sent" | "mined" | "confirmed" | "failed" | "replaced" | "dropped";

export interface TransactionsTable {
  id: string;
  /** transfer (POST /transaction), filler (closes a nonce gap), or the token/member operation's name. */
  kind: string;
  chain_id: number;
  wallet_id: string | null;
  address_index: number | null;
  from_address: string;
  to_address: string | null;
  /** Wei as a decimal string. */
  value: string;
  data: string;
  nonce: number;
  gas_limit: string;
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  gas_price: string | null;
  /** The signed transaction, stored before it is broadcast. */
  raw: string;
  tx_hash: string;
  state: TxState;
  replaced_by: string | null;
  replaces: string | null;
  block_number: number | null;
  block_hash: string | null;
  error: string | null;
  revert_data: string | null;
  broadcasts: number;
  /** JSON with operation details (token, amount, ...). */
  metadata: string | null;
  owner: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  /** The Idempotency-Key (route and key) the transaction was signed under, so a crash can be resolved. */
  idempotency_ref: string | null;
  /** The transport this transaction sends, delivers, cancels or refunds. */
  transport_id: string | null;
  /** The W3C traceparent of the span it was signed in (tracing on): its later life joins that trace. */
  trace_parent: string | null;
}

export interface IdempotencyKeysTable {
  route: string;
  key: string;
  request_hash: string;
  status: "in_progress" | "done";
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  /** While in progress: the holder renews this; once past, the key is resolved from the transactions. */
  lease_until: number | null;
}

export interface MembersTable {
  registry: string;
  member_id: number;
  name: string;
  tx_hash: string;
  owner: string | null;
  created_at: number;
}

export type TransportKind = "ERC20" | "ERC721" | "MESSAGE";
/**
 * sent: the source transaction is out; delivering: the delivery is out; then delivered or failed.
 * Held on the way (looked at again, never delivered while held): awaiting_quorum (the source chain's
 * upstreams disagree or too few answer), reorged (the source event left the canonical chain), queued
 * (over its lane's limit until release_at).
 */
export type TransportState =
  | "sent"
  | "awaiting_quorum"
  | "reorged"
  | "queued"
  | "delivering"
  | "delivered"
  | "failed";

export interface TransportsTable {
  /** 0x + 32 bytes, chosen by chaingate and claimed once by the source endpoint. */
  id: string;
  kind: TransportKind;
  with_data: number;
  source_chain_id: number;
  destination_chain_id: number;
  sender: string;
  recipient: string;
  token: string | null;
  /** Decimal strings. */
  amount: string | null;
  token_id: string | null;
  payload_hash: string | null;
  /** The MessageSent body as the relayer read it from the source chain; null until then. */
  body: string | null;
  state: TransportState;
  error: string | null;
  /** A refused delivery's raw revert data (hex). */
  revert_data: string | null;
  source_tx_hash: string | null;
  /** Set when the relayer has seen the MessageSent event with enough confirmations. */
  source_block: number | null;
  destination_tx_hash: string | null;
  /** Destination block from which a MessageDelivered event can be looked for. */
  search_from_block: number | null;
  attempts: number;
  lease_owner: string | null;
  lease_until: number | null;
  owner: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  /** For a refused token transport: pending until the tokens are back with the sender, then done. */
  refund_state: "pending" | "done" | null;
  refund_tx_hash: string | null;
  /** The source block's hash as a quorum of upstreams confirmed it, and how many confirmed. */
  source_block_hash: string | null;
  source_confirmations: number | null;
  /** A held transport is looked at again from this time (ms); null: at the next pass. */
  next_check_at: number | null;
  /** Queued on its lane: delivered from release_at, or refunded at refund_at when that comes first. */
  release_at: number | null;
  refund_at: number | null;
}

/** A resumable subscription's stream (see filters/resumable-subscriptions.ts). */
export interface SubscriptionStreamsTable {
  id: string;
  owner: string;
  chain_id: number;
  kind: string;
  criteria: string;
  recent: string;
  created_at: number;
  updated_at: number;
}

/** An instance sharing the store, by its heartbeat (see store/instance-registry.ts). */
export interface InstancesTable {
  id: string;
  started_at: number;
  seen_at: number;
}

/** A per-key slot (a WebSocket) held by a live instance, where the cap is shared as one count (see store/held-slots.ts). */
export interface HeldSlotsTable {
  id: string;
  kind: string;
  owner: string;
  instance_id: string;
  created_at: number;
}

/** An EIP-5792 bundle (see custody/wallet-calls.ts); `owner` is "" without API keys. */
export interface CallBundlesTable {
  owner: string;
  id: string;
  chain_id: number;
  from_address: string;
  /** JSON array of the hashes sent, in call order. */
  tx_hashes: string;
  /** JSON array of their nonces, in the same order (migration 029); null for a bundle recorded before it. */
  tx_nonces: string | null;
  /** How many calls the bundle asked for (more than sent when one was refused). */
  calls: number;
  error: string | null;
  created_at: number;
}

/** A payload eth_signTransaction handed out at a nonce (see tx/nonce-guard.ts); lower-case address. */
export interface SignedPayloadsTable {
  chain_id: number;
  address: string;
  nonce: number;
  tx_hash: string;
  raw: string;
  created_at: number;
}

/** An unlock every instance honours until `until` (see custody/cluster-unlocks.ts). */
export interface UnlocksTable {
  owner: string;
  address: string;
  wallet_id: string;
  idx: number;
  sealed: string | null;
  key_id: string | null;
  until: number;
  created_at: number;
  /** The instance that made it (its unlock, unsealed, holds there only while it lives); null before 025. */
  instance_id: string | null;
}

/** Password attempts counted apart from a wallet's own (an admin on another tenant's wallet). */
export interface AttemptLimitsTable {
  scope: string;
  failed_attempts: number;
  locked_until: number;
}

/** A per-lane limit: a token bucket of `capacity` refilled over `period_ms`, shared by every instance. */
export interface LaneLimitsTable {
  source_chain_id: number;
  destination_chain_id: number;
  /** Lower-case token address on the source chain. */
  token: string;
  /** Decimal strings, in the token's base units (ERC721: tokens). */
  capacity: string;
  period_ms: number;
  refund_after_ms: number | null;
  /** What may cross now as of level_at; negative while queued transports hold reservations. */
  level: string;
  level_at: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface RelayerCursorsTable {
  chain_id: number;
  endpoint: string;
  next_block: number;
  updated_at: number;
}

export type ApiKeyRole = "admin" | "user";

export interface ApiKeysTable {
  /** Public id, also the tenant that owns what the key creates. */
  id: string;
  name: string;
  role: ApiKeyRole;
  /** SHA-256 (hex) of the key: keys are 256 random bits, so a fast hash is enough and lookups are one index read. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface PendingTransactionsTable {
  /** Order of first sight across every instance (autoincrement); pending filters keep a cursor in it. */
  seq: Generated<number>;
  chain_id: number;
  hash: string;
  seen_at: number;
}

/** One address of an unattended wallet: its private key sealed with AES-256-GCM under the server key. */
export interface UnattendedKeysTable {
  wallet_id: string;
  idx: number;
  /** Checksummed, as in wallet_addresses. */
  address: string;
  /** JSON {iv, data, tag} (hex); the additional data binds it to wallet, index and address. */
  sealed: string;
  /** Which server key sealed it (a fingerprint, not the key). */
  key_id: string;
  created_at: number;
}

export interface Database {
  policies: PoliciesTable;
  policy_spends: PolicySpendsTable;
  audit_log: AuditLogTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  balance_alerts: BalanceAlertsTable;
  balance_alert_state: BalanceAlertStateTable;
  unattended_keys: UnattendedKeysTable;
  pending_transactions: PendingTransactionsTable;
  api_keys: ApiKeysTable;
  members: MembersTable;
  transports: TransportsTable;
  lane_limits: LaneLimitsTable;
  attempt_limits: AttemptLimitsTable;
  unlocks: UnlocksTable;
  instances: InstancesTable;
  held_slots: HeldSlotsTable;
  signed_payloads: SignedPayloadsTable;
  call_bundles: CallBundlesTable;
  subscription_streams: SubscriptionStreamsTable;
  relayer_cursors: RelayerCursorsTable;
  nonce_ledger: NonceLedgerTable;
  transactions: TransactionsTable;
  idempotency_keys: IdempotencyKeysTable;
  filters: FiltersTable;
  wallets: WalletsTable;
  wallet_addresses: WalletAddressesTable;
}
