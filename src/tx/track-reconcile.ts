/** The tracker's reconcile job: records of recent blocks checked against the chain after it may have lost state. */

import { fixedLimit } from "../store/fixed-limit.js";
import type { TransactionsTable, TxState } from "../store/schema.js";
import { stateLiterals } from "../store/state-literal.js";
import type { Chain } from "../upstream/chain-registry.js";
import { headOf as askHead, type NodeReceipt } from "../upstream/node-reads.js";
import { revertOf } from "./revert-replay.js";
import { broadcast } from "./track-broadcast.js";
import { BATCH, type TrackerContext } from "./tracker-context.js";
import { heldByPipeline } from "./transaction-states.js";

/** Never-mined failures and drops this recent are converged again at start. */
const REFUSALS_WINDOW_MS = 24 * 3600_000;

function recentRefusals(ctx: TrackerContext, chain: Chain): Promise<TransactionsTable[]> {
  return ctx.options.store.db
    .selectFrom("transactions")
    .selectAll()
    .where("chain_id", "=", chain.chainId)
    .where("state", "in", stateLiterals(["failed", "dropped"]))
    .where("block_number", "is", null)
    .where("updated_at", ">=", ctx.now() - REFUSALS_WINDOW_MS)
    .orderBy("updated_at", "desc")
    .limit(fixedLimit(BATCH))
    .execute();
}

/** The state and block a record takes from its own receipt: mined, or failed if it reverted. */
function atReceipt(receipt: NodeReceipt): {
  state: TxState;
  block_number: number;
  block_hash: string;
} {
  return {
    state: receipt.status === "0x1" ? "mined" : "failed",
    block_number: Number(BigInt(receipt.blockNumber)),
    block_hash: receipt.blockHash,
  };
}

/** A refusal whose own receipt is on the chain after all takes its state and block (the revert reason if it reverted). */
export async function toOwnReceipt(
  ctx: TrackerContext,
  chain: Chain,
  row: TransactionsTable,
  receipt: NodeReceipt,
): Promise<void> {
  const at = atReceipt(receipt);
  const error = at.state === "mined" ? null : await revertOf(chain, row, at.block_number);
  await ctx.update(row, { ...at, error });
}

/**
 * After a chain may have lost state (a restarted node, a head that went back), records mined in this
 * many blocks below the head, and any above it, are checked against the chain again.
 */
export const RECONCILE_DEPTH = 64;

/**
 * Checks the records of the last RECONCILE_DEPTH blocks against the chain: a transaction it no
 * longer has goes back to queued (the next step resends its stored bytes, in nonce order), one it
 * has elsewhere gets its new block; every sent one is offered again (the node's pool may be gone).
 * Then each touched address's ledger is set to what the chain and the live records say.
 */
export async function reconcile(ctx: TrackerContext, chain: Chain): Promise<void> {
  const { store, logger } = ctx.options;
  const head = await askHead(chain);
  const recorded = await store.db
    .selectFrom("transactions")
    .selectAll()
    .where("chain_id", "=", chain.chainId)
    .where("state", "in", stateLiterals(["mined", "confirmed", "failed"]))
    .where("block_number", ">=", Math.max(0, head - RECONCILE_DEPTH))
    .orderBy("nonce")
    .limit(fixedLimit(BATCH))
    .execute();
  const touched = new Map<string, TransactionsTable>();
  let lost = 0;
  // The receipts go out together (batched), so a restart checks 500 records in a few requests;
  // a receipt that cannot be read fails the pass, which is tried again (the chain stays marked).
  const receipts = await Promise.all(recorded.map((row) => ctx.receipt(chain, row.tx_hash)));
  await Promise.all(
    recorded.map((row, i) => {
      const receipt = receipts[i];
      if (receipt?.blockHash === row.block_hash) return undefined;
      touched.set(row.from_address, row);
      if (receipt) return ctx.update(row, atReceipt(receipt));
      lost++;
      return ctx.update(row, { state: "queued", block_number: null, block_hash: null, error: null });
    }),
  );
  const now = ctx.now();
  const queued = (await ctx.rows(chain, ["queued", "sent"])).filter(
    // A row its pipeline is broadcasting right now is left to it, as in a normal pass.
    (row) => !heldByPipeline(row, ctx.startedAt, now),
  );
  for (const row of queued) {
    touched.set(row.from_address, row);
    await broadcast(ctx, chain, row);
  }
  await refusalsToChain(ctx, chain, touched);
  for (const row of touched.values()) await ctx.settle(chain, row);
  if (lost > 0 || queued.length > 0)
    logger.warn({ chainId: chain.chainId, lost, resent: queued.length }, "reconciled records with the chain");
}

/**
 * Refusals of the last day: one whose own transaction the chain has after all (a node answered
 * "nonce too low" and knew neither the hash nor, for a moment, the block) takes its receipt's
 * state and block (decision 192); every address is settled after, as a crash may have cut a
 * refusal's clean-up short (the ledger left past it).
 */
async function refusalsToChain(
  ctx: TrackerContext,
  chain: Chain,
  touched: Map<string, TransactionsTable>,
): Promise<void> {
  const refusals = await recentRefusals(ctx, chain);
  const receipts = await Promise.all(refusals.map((row) => ctx.receipt(chain, row.tx_hash)));
  for (const [i, row] of refusals.entries()) {
    const receipt = receipts[i];
    if (receipt) await toOwnReceipt(ctx, chain, row, receipt);
    if (!touched.has(row.from_address)) touched.set(row.from_address, row);
  }
}
