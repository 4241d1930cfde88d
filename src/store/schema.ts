/** Table types for Kysely: the one description of what the store holds. */
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
}

export interface WalletsTable {
  id: string;
  type: "KEYSTORE_V3";
  /** generated (new seed), mnemonic (imported seed) or keystore (one imported key, no seed). */
  source: "generated" | "mnemonic" | "keystore";
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
  /** Standalone keystore v3 JSON for this address's key. */
  keystore: string;
  created_at: number;
}

export interface Database {
  filters: FiltersTable;
  wallets: WalletsTable;
  wallet_addresses: WalletAddressesTable;
}
