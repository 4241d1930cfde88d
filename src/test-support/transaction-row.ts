/** A transactions row as the pipeline stores it, for tests that write records straight to a store (the bytes are not a real transaction). */
import type { TransactionsTable } from "../store/schema.js";

/** A transfer on chain 31337 with the fields a test names; everything else as a fresh record has it. */
export function transactionRow(
  fields: Pick<TransactionsTable, "id" | "nonce" | "tx_hash" | "state"> & Partial<TransactionsTable>,
): TransactionsTable {
  return {
    kind: "transfer",
    chain_id: 31_337,
    wallet_id: null,
    address_index: null,
    from_address: "0x00000000000000000000000000000000000000aa",
    to_address: "0x00000000000000000000000000000000000000bb",
    value: "1",
    data: "0x",
    gas_limit: "21000",
    max_fee_per_gas: "2",
    max_priority_fee_per_gas: "1",
    gas_price: null,
    raw: "0x02",
    replaced_by: null,
    replaces: null,
    block_number: null,
    block_hash: null,
    error: null,
    revert_data: null,
    broadcasts: 0,
    metadata: null,
    owner: null,
    created_at: 1,
    updated_at: 1,
    sent_at: null,
    idempotency_ref: null,
    transport_id: null,
    trace_parent: null,
    ...fields,
  };
}
