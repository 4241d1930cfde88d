/** Questions other subsystems ask of the transactions table, answered by the table's owner. */
import type { Store } from "../store/database.js";
import type { TransactionsTable } from "../store/schema.js";

/** Fee bumps chain at most this deep; a longer chain is a loop in bad data, not a real history. */
const MAX_REPLACEMENTS = 20;

/**
 * The record that took `row`'s place, found by what it shares with it: a fee bump or a cancel
 * keeps the sender and the nonce, so `transactions_sender_nonce` finds it (no index on the hash,
 * decision 204). Undefined when nothing replaced it.
 */
export function replacementOf(store: Store, row: TransactionsTable): Promise<TransactionsTable | undefined> {
  if (row.replaced_by === null) return Promise.resolve(undefined);
  return store.db
    .selectFrom("transactions")
    .selectAll()
    .where("chain_id", "=", row.chain_id)
    .where("from_address", "=", row.from_address)
    .where("nonce", "=", row.nonce)
    .where("tx_hash", "=", row.replaced_by)
    .executeTakeFirst();
}

/** The transaction that stands for `row`: itself, or the fee bump or cancel that took its place, followed to the last. */
export async function finalOf(
  store: Store,
  row: TransactionsTable | undefined,
): Promise<TransactionsTable | undefined> {
  let current = row;
  for (let hops = 0; current?.replaced_by && hops < MAX_REPLACEMENTS; hops++) {
    const next = await replacementOf(store, current);
    if (next === undefined) break;
    current = next;
  }
  return current;
}

/**
 * The transaction that stands for a transport's source `hash`: chaingate's record of it (it carries
 * the transport's id, `transactions_transport_id`) or the replacement that took its place.
 * Undefined when chaingate did not send it.
 */
export async function transportSource(
  store: Store,
  transportId: string,
  hash: string,
): Promise<TransactionsTable | undefined> {
  const row = await store.db
    .selectFrom("transactions")
    .selectAll()
    .where("transport_id", "=", transportId)
    .where("tx_hash", "=", hash)
    .executeTakeFirst();
  return finalOf(store, row);
}

/** The transactions of one kind a transport has caused on one chain, newest first. */
export function transactionsOfTransport(
  store: Store,
  transportId: string,
  chainId: number,
  kind: string,
): Promise<Pick<TransactionsTable, "tx_hash" | "state" | "error">[]> {
  return store.db
    .selectFrom("transactions")
    .select(["tx_hash", "state", "error"])
    .where("transport_id", "=", transportId)
    .where("chain_id", "=", chainId)
    .where("kind", "=", kind)
    .orderBy("created_at", "desc")
    .execute();
}
