/** The tracker's confirm job: mined rows confirmed by their block's hash, or sent back when a reorg took the block. */
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { headOf as askHead, blockHashAt } from "../upstream/node-reads.js";
import type { TrackerContext } from "./tracker-context.js";

/** Confirms by block hash, so a reorg that replaced the block sends the row back to "sent". */
export async function confirm(ctx: TrackerContext, chain: Chain, rows: TransactionsTable[]): Promise<void> {
  let head: number;
  try {
    head = await askHead(chain);
  } catch {
    return;
  }
  const due = rows.filter((row) => head - row.block_number! + 1 >= ctx.options.confirmations);
  // One read per block, all of a pass in one batch; a block that could not be read is left for
  // the next pass (undefined), one the node no longer has (null) sends its rows back.
  const numbers = [...new Set(due.map((row) => row.block_number!))];
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
    due.map((row) => {
      const hash = hashes.get(row.block_number!);
      if (hash === undefined) return undefined;
      return hash === row.block_hash
        ? ctx.update(row, { state: "confirmed" })
        : ctx.update(row, { state: "sent", block_number: null, block_hash: null });
    }),
  );
}
