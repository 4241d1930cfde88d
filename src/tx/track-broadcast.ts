/** The tracker's rebroadcast job: stored bytes sent again (after a crash, a fault or a drop), the outcome moving the row on. */

import type { Hex } from "viem";
import { NodeRpcError } from "../errors/rpc-errors.js";
import type { TransactionsTable } from "../store/schema.js";
import { inStoredTrace } from "../tracing/spans.js";
import type { Chain } from "../upstream/chain-registry.js";
import { sendRawTransaction } from "../upstream/node-reads.js";
import { fateOf } from "./send-fate.js";
import type { TrackerContext } from "./tracker-context.js";

/** Sends stored bytes (after a crash, a fault, or a drop); a refusal is judged from the chain, as on the first send. */
export async function broadcast(ctx: TrackerContext, chain: Chain, row: TransactionsTable): Promise<void> {
  try {
    await inStoredTrace(row.trace_parent, "chaingate.resend", () =>
      sendRawTransaction(chain, row.raw as Hex, { batch: true }),
    );
  } catch (error) {
    if (!(error instanceof NodeRpcError)) return; // node unreachable: next pass
    switch (await fateOf(chain, row, error, ctx.options.logger)) {
      case "taken":
        break;
      case "waiting":
        return; // lower nonces first: judged again on a later pass
      case "nonce_used": {
        // Either our own transaction was mined already (its receipt will say so) or another took the nonce.
        const receipt = await ctx.receipt(chain, row.tx_hash);
        if (receipt) {
          await ctx.update(row, { state: "sent", sent_at: row.sent_at ?? ctx.now() });
          return;
        }
        await ctx.update(row, {
          state: "dropped",
          error: `nonce ${row.nonce} was used by another transaction`,
        });
        await ctx.settle(chain, row);
        return;
      }
      case "refused":
        await ctx.update(row, { state: "failed", error: error.message });
        await ctx.settle(chain, row);
        return;
    }
  }
  await ctx.update(row, { state: "sent", sent_at: ctx.now(), broadcasts: row.broadcasts + 1 });
}
