/** The records behind list_all_transports: newest first, filtered, paged like list_all_transfers. */

import { newestFirstPage } from "../store/cursor-page.js";
import type { Store } from "../store/database.js";
import type { TransportKind, TransportState, TransportsTable } from "../store/schema.js";

export const TRANSPORT_STATES: readonly TransportState[] = [
  "sent",
  "awaiting_quorum",
  "reorged",
  "queued",
  "delivering",
  "delivered",
  "failed",
];
export const TRANSPORT_KINDS: readonly TransportKind[] = ["ERC20", "ERC721", "MESSAGE"];

export interface TransportFilter {
  state?: TransportState;
  kind?: TransportKind;
  source_chain_id?: number;
  destination_chain_id?: number;
  limit?: number;
  cursor?: string;
}

export function toTransportRecord(row: TransportsTable) {
  return {
    id: row.id,
    kind: row.kind,
    with_data: row.with_data === 1,
    source_chain_id: row.source_chain_id,
    destination_chain_id: row.destination_chain_id,
    sender: row.sender,
    recipient: row.recipient,
    token: row.token,
    amount: row.amount,
    token_id: row.token_id,
    payload_hash: row.payload_hash,
    state: row.state,
    error: row.error,
    /** A refused delivery's raw revert data (the `error` says it in words). */
    revert_data: row.revert_data,
    source_tx_hash: row.source_tx_hash,
    destination_tx_hash: row.destination_tx_hash,
    attempts: row.attempts,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    delivered_at: row.delivered_at === null ? null : new Date(row.delivered_at).toISOString(),
    /** A refused token transport: "pending" until the tokens are minted back to the sender, then "done". */
    refund_state: row.refund_state,
    refund_tx_hash: row.refund_tx_hash,
    /** How many of the source chain's upstreams confirmed the source event before it was delivered. */
    source_confirmations: row.source_confirmations,
    /** Queued on its lane's limit: when it will be delivered, or refunded instead (whichever is set first). */
    release_at: row.release_at === null ? null : new Date(row.release_at).toISOString(),
    refund_at: row.refund_at === null ? null : new Date(row.refund_at).toISOString(),
  };
}

export async function listTransports(store: Store, filter: TransportFilter, owner: string | null = null) {
  const limit = filter.limit ?? 100;
  const query = store.db
    .selectFrom("transports")
    .selectAll()
    .$if(owner !== null, (q) => q.where("owner", "=", owner))
    .$if(filter.state !== undefined, (q) => q.where("state", "=", filter.state!))
    .$if(filter.kind !== undefined, (q) => q.where("kind", "=", filter.kind!))
    .$if(filter.source_chain_id !== undefined, (q) =>
      q.where("source_chain_id", "=", filter.source_chain_id!),
    )
    .$if(filter.destination_chain_id !== undefined, (q) =>
      q.where("destination_chain_id", "=", filter.destination_chain_id!),
    );
  const { page, next } = await newestFirstPage(query, filter.cursor, limit);
  return { transports: page.map(toTransportRecord), next_cursor: next };
}
