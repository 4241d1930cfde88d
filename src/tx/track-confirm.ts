/** The tracker's confirm job: every mined row checked against the chain each pass, confirmed once final by its chain's rule, sent back when a reorg took its block. */
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { finalBlock } from "../upstream/final-block.js";
import { blockHashAt } from "../upstream/node-reads.js";
import type { TrackerContext } from "./tracker-context.js";

/**
 * Until it is final, a mined row's block is read again each pass (one read per block, all of a pass
 * in one batch): a block no longer the chain's (a reorg, whether the new fork is longer or not)
 * sends the row back to "sent", where the follow job finds it in its new block or broadcasts its
 * stored bytes again. Final by the chain's rule (a depth, or the node's finalized block) and still
 * the chain's: "confirmed".
 */
export async function confirm(ctx: TrackerContext, chain: Chain, rows: TransactionsTable[]): Promise<void> {
  let final: number;
  try {
    final = await finalBlock(chain, ctx.finalityOf(chain));
  } catch {
    return;
  }
  // A block that could not be read is left for the next pass (undefined); one the node no longer
  // has (null) sends its rows back.
  const numbers = [...new Set(rows.map((row) => row.block_number!))];
  const hashes = new Map(
    await Promise.all(
      numbers.map(async (number) => {
        const hash = await blockHashAt(chain, number, { batch: true }).catch(() => undefined);
        return [number, hash] as const;
      }),
    ),
  );
  // Updates go out together (one group commit).
  await Promise.all(
    rows.map((row) => {
      const hash = hashes.get(row.block_number!);
      if (hash === undefined) return undefined;
      if (hash !== row.block_hash)
        return ctx.update(row, { state: "sent", block_number: null, block_hash: null });
      return row.block_number! <= final ? ctx.update(row, { state: "confirmed" }) : undefined;
    }),
  );
}
