/** A transport as first recorded, by the API at send time or by the relayer from the source chain's event. */
import type { TransportsTable } from "../store/schema.js";

/** What is known about a transport when it is sent; everything else starts empty. */
export type SentTransport = Pick<
  TransportsTable,
  | "id"
  | "kind"
  | "with_data"
  | "source_chain_id"
  | "destination_chain_id"
  | "sender"
  | "recipient"
  | "token"
  | "amount"
  | "token_id"
  | "payload_hash"
  | "source_tx_hash"
> &
  Partial<Pick<TransportsTable, "body" | "source_block" | "owner">>;

export function newTransportRow(sent: SentTransport, now: number): TransportsTable {
  return {
    body: null,
    source_block: null,
    owner: null,
    ...sent,
    state: "sent",
    error: null,
    revert_data: null,
    destination_tx_hash: null,
    search_from_block: null,
    attempts: 0,
    lease_owner: null,
    lease_until: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
    refund_state: null,
    refund_tx_hash: null,
    source_block_hash: null,
    source_confirmations: null,
    next_check_at: null,
    release_at: null,
    refund_at: null,
  };
}
