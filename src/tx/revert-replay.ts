/** Why a mined transaction reverted: replayed at its block, since a receipt carries no reason. */
import { NodeRpcError } from "../errors/rpc-errors.js";
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead } from "../upstream/node-reads.js";
import { revertReason } from "./tx-errors.js";

export async function revertOf(
  chain: Chain,
  row: Pick<TransactionsTable, "from_address" | "to_address" | "data" | "value">,
  blockNumber: number,
): Promise<string> {
  try {
    await nodeRead(chain, "eth_call", [
      {
        from: row.from_address,
        ...(row.to_address ? { to: row.to_address } : {}),
        data: row.data,
        value: `0x${BigInt(row.value).toString(16)}`,
      },
      `0x${blockNumber.toString(16)}`,
    ]);
    return "reverted";
  } catch (error) {
    if (error instanceof NodeRpcError) {
      const reason = revertReason(error.data);
      return reason ? `reverted: ${reason}` : `reverted: ${error.message}`;
    }
    return "reverted";
  }
}
