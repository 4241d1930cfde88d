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

export interface Database {
  filters: FiltersTable;
}
