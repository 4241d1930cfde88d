/** The tracker's confirm job: every mined row's block checked against the chain each pass, confirmed once final by its chain's rule, sent back when a reorg took its block. */

import { fixedLimit } from "../store/fixed-limit.js";
import { stateLiteral } from "../store/state-literal.js";
import type { Chain } from "../upstream/chain-registry.js";
import { finalBlock } from "../upstream/final-block.js";
import { blockHashAt } from "../upstream/node-reads.js";
import { BATCH, type TrackerContext } from "./tracker-context.js";

/**
 * Until it is final, a mined row's block is read again each pass: a block no longer the chain's (a
 * reorg, whether the new fork is longer or not) sends its rows back to "sent", where the follow job
 * finds them in their new block or broadcasts their stored bytes again. Final by the chain's rule
 * (a depth, or the node's finalized block) and still the chain's: "confirmed".
 *
 * A pass reads the distinct blocks that hold mined rows (one store read, one batched node read per
 * block) and loads rows only where something moves: while a chain waits out a long finality
 * window, thousands of mined rows cost a few blocks' reads a pass, not their own.
 */
export async function confirm(ctx: TrackerContext, chain: Chain): Promise<void> {
  const { db } = ctx.options.store;
  const blocks = await db
    .selectFrom("transactions")
    .select(["block_number", "block_hash"])
    .distinct()
    .where("chain_id", "=", chain.chainId)
    .where("state", "=", stateLiteral("mined"))
    .orderBy("block_number")
    .limit(fixedLimit(BATCH))
    .execute();
  if (blocks.length === 0) return;
  let final: number;
  try {
    final = await finalBlock(chain, ctx.finalityOf(chain));
  } catch {
    return;
  }
  // A block that could not be read is left for the next pass (undefined); one the node no longer
  // has (null) sends its rows back.
  const numbers = [...new Set(blocks.map((b) => b.block_number!))];
  const hashes = new Map(
    await Promise.all(
      numbers.map(async (number) => {
        const hash = await blockHashAt(chain, number, { batch: true }).catch(() => undefined);
        return [number, hash] as const;
      }),
    ),
  );
  const moving = blocks.filter((b) => {
    const hash = hashes.get(b.block_number!);
    return hash !== undefined && (hash !== b.block_hash || b.block_number! <= final);
  });
  if (moving.length === 0) return;
  const rows = await db
    .selectFrom("transactions")
    .selectAll()
    .where("chain_id", "=", chain.chainId)
    .where("state", "=", stateLiteral("mined"))
    .where(
      "block_hash",
      "in",
      moving.map((b) => b.block_hash!),
    )
    .execute();
  // Updates go out together (one group commit).
  await Promise.all(
    rows.map((row) =>
      hashes.get(row.block_number!) === row.block_hash
        ? ctx.update(row, { state: "confirmed" })
        : ctx.update(row, { state: "sent", block_number: null, block_hash: null }),
    ),
  );
}
