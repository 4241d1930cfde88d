/** Questions other subsystems ask of the transactions table, answered by the table's owner. */
import type { Store } from "../store/database.js";
import type { TransactionsTable } from "../store/schema.js";

/** Fee bumps chain at most this deep; a longer chain is a loop in bad data, not a real history. */
const MAX_REPLACEMENTS = 20;

/** The transaction that stands for `hash`: itself, or the fee-bump replacement that took its place. */
export async function finalTransaction(store: Store, hash: string): Promise<TransactionsTable | undefined> {
  let row = await store.db
    .selectFrom("transactions")
    .selectAll()
    .where("tx_hash", "=", hash)
    .executeTakeFirst();
  for (
    let hops = 0;
    row?.state === "replaced" && row.replaced_by !== null && hops < MAX_REPLACEMENTS;
    hops++
  ) {
    row = await store.db
      .selectFrom("transactions")
      .selectAll()
      .where("id", "=", row.replaced_by)
      .executeTakeFirst();
  }
  return row;
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
