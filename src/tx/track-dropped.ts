/** The tracker's drop-watch job: a record dropped in the last hour follows its own receipt at each new head. */
import { sql } from "kysely";
import { fixedLimit } from "../store/fixed-limit.js";
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { toOwnReceipt } from "./track-reconcile.js";
import { BATCH, type TrackerContext } from "./tracker-context.js";

/**
 * How long a drop is watched between reconciles. A node that answered "nonce too low" while it
 * knew neither the hash nor its receipt (an upstream behind a balancer that lags the others, a
 * node catching up after a restart) shows the receipt within seconds or minutes; the reconcile at
 * start and after a reorg still looks over the last day.
 */
export const WATCH_DROPS_MS = 3600_000;

/** The chain's records dropped in the last hour, newest first (through migration 028's partial index). */
export function recentDrops(ctx: TrackerContext, chain: Chain): Promise<TransactionsTable[]> {
  return (
    ctx.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("chain_id", "=", chain.chainId)
      // Written as the index's own predicate: a bound 'dropped' would not let SQLite use it.
      .where(sql<boolean>`state = 'dropped'`)
      .where("updated_at", ">=", ctx.now() - WATCH_DROPS_MS)
      .orderBy("updated_at", "desc")
      .limit(fixedLimit(BATCH))
      .execute()
  );
}

/**
 * A dropped record whose own transaction is on the chain after all moves to `mined` at that block
 * (or `failed` with the revert reason), as the reconcile would move it at the next start (decision
 * 192), without waiting for one (decision 193). The receipt is asked once per head, as a sent
 * record's is (decision 187): nothing is asked while the chain makes no block. A record whose nonce
 * another transaction really took has no receipt and stays as it is. The drop already set the
 * address's ledger past this nonce (the chain had used it), so no ledger changes.
 */
export async function followDropped(
  ctx: TrackerContext,
  chain: Chain,
  rows: readonly TransactionsTable[],
): Promise<void> {
  const receipts = await Promise.all(
    rows.map((row) => ctx.sentReceipt(chain, row.tx_hash).catch(() => null)),
  );
  for (const [i, row] of rows.entries()) {
    const receipt = receipts[i];
    if (!receipt) continue;
    ctx.options.logger.warn(
      { hash: row.tx_hash, block: Number(BigInt(receipt.blockNumber)) },
      "a dropped transaction is on the chain after all",
    );
    await toOwnReceipt(ctx, chain, row, receipt);
  }
}
