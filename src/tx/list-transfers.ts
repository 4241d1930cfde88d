/** The records behind POST /list_all_transfers: newest first, filtered, paged by an opaque cursor. */
import { newestFirstPage } from "../store/cursor-page.js";
import type { Store } from "../store/database.js";
import type { TransactionsTable, TxState } from "../store/schema.js";
import { stateLiteral } from "../store/state-literal.js";

export interface TransferFilter {
  wallet_id?: string;
  address?: string;
  state?: TxState;
  chain_id?: number;
  kind?: string;
  limit?: number;
  cursor?: string;
}

export interface TransferRecord {
  id: string;
  kind: string;
  wallet_id: string | null;
  index: number | null;
  chain_id: number;
  from: string;
  to: string | null;
  value: string;
  nonce: number;
  tx_hash: string;
  replaced_by: string | null;
  state: TxState;
  block_number: number | null;
  block_hash: string | null;
  error: string | null;
  details: unknown;
  created_at: string;
  updated_at: string;
}

export const TX_STATES: readonly TxState[] = [
  "queued",
  "sent",
  "mined",
  "confirmed",
  "failed",
  "replaced",
  "dropped",
];
const DEFAULT_LIMIT = 100;

export function toTransferRecord(row: TransactionsTable): TransferRecord {
  return {
    id: row.id,
    kind: row.kind,
    wallet_id: row.wallet_id,
    index: row.address_index,
    chain_id: row.chain_id,
    from: row.from_address,
    to: row.to_address,
    value: row.value,
    nonce: row.nonce,
    tx_hash: row.tx_hash,
    replaced_by: row.replaced_by,
    state: row.state,
    block_number: row.block_number,
    block_hash: row.block_hash,
    error: row.error,
    details: row.metadata ? JSON.parse(row.metadata) : null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export async function listTransfers(
  store: Store,
  filter: TransferFilter,
  owner: string | null = null,
): Promise<{ transfers: TransferRecord[]; next_cursor: string | null }> {
  const limit = filter.limit ?? DEFAULT_LIMIT;
  const query = store.db
    .selectFrom("transactions")
    .selectAll()
    .$if(owner !== null, (q) => q.where("owner", "=", owner))
    .$if(filter.wallet_id !== undefined, (q) => q.where("wallet_id", "=", filter.wallet_id!))
    .$if(filter.address !== undefined, (q) =>
      q.where((eb) =>
        eb.or([
          eb(eb.fn("lower", ["from_address"]), "=", filter.address!.toLowerCase()),
          eb(eb.fn("lower", ["to_address"]), "=", filter.address!.toLowerCase()),
        ]),
      ),
    )
    .$if(filter.state !== undefined, (q) => q.where("state", "=", stateLiteral(filter.state!)))
    .$if(filter.chain_id !== undefined, (q) => q.where("chain_id", "=", filter.chain_id!))
    .$if(filter.kind !== undefined, (q) => q.where("kind", "=", filter.kind!));
  const { page, next } = await newestFirstPage(query, filter.cursor, limit);
  return { transfers: page.map(toTransferRecord), next_cursor: next };
}
