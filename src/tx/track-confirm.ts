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
 * window, thousands of mined rows cost a few blocks' reads a pass, not their own. A block not yet
 * final that was read as the chain's at the head the head tracker still holds is not read again
 * (decision 203): a pass every second against a block every 12 s read each of a finalized-rule
 * chain's ~80 waiting blocks twelve times a block. A block about to be confirmed is always read.
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
  const head = chain.head?.head;
  const numbers = blocksToRead(ctx, chain, blocks, final, head);
  const hashes = new Map(
    await Promise.all(
      numbers.map(async (number) => {
        const hash = await blockHashAt(chain, number, { batch: true }).catch(() => undefined);
        return [number, hash] as const;
      }),
    ),
  );
  for (const b of blocks) {
    // Not read this pass: its mark stands. Read: marked while the chain holds it; a failed read,
    // or another block at its number, is asked again next pass.
    if (!hashes.has(b.block_number!)) continue;
    if (hashes.get(b.block_number!) === b.block_hash) ctx.canonical.mark(chain, blockKey(b), head);
    else ctx.canonical.clear(chain, blockKey(b));
  }
  ctx.canonical.keepOnly(chain, blocks.map(blockKey));
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

type MinedBlock = { block_number: number | null; block_hash: string | null };
const blockKey = (b: MinedBlock) => `${b.block_number}:${b.block_hash}`;

/**
 * The distinct block numbers a pass reads: every final one (it is read before its rows are
 * confirmed), and those not final where some row's block was not read as the chain's at `head`.
 * With no fresh head every block is read. A same-height reorg the head number does not show is
 * found when the head moves or when the block turns final, whichever comes first.
 */
function blocksToRead(
  ctx: TrackerContext,
  chain: Chain,
  blocks: readonly MinedBlock[],
  final: number,
  head: number | undefined,
): number[] {
  const numbers = new Set<number>();
  for (const b of blocks)
    if (b.block_number! <= final || !ctx.canonical.at(chain, blockKey(b), head)) numbers.add(b.block_number!);
  return [...numbers];
}
