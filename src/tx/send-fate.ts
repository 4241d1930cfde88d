/** What a node's refusal of a signed send means, read from the chain rather than from the node's words. */
import type { Logger } from "pino";
import type { NodeRpcError } from "../errors/rpc-errors.js";
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, nonceOf } from "../upstream/node-reads.js";
import { isAlreadyKnown, isNonceConflict } from "./tx-errors.js";

export type SendFate = "taken" | "nonce_used" | "waiting" | "refused";

/**
 * `taken` when the node has these very bytes (pooled or mined: a resend, or Hardhat answering a
 * reverting send with an error and mining it); `nonce_used` when the address is past this nonce (a
 * key used outside chaingate, however the node words "nonce too low"); `waiting` when the chain's
 * pending nonce is still below this one: the node may hold it queued behind the gap and show it to
 * no lookup (anvil does), so the refusal is judged again once the lower nonces are in; otherwise
 * `refused`, and the nonce is given back.
 */
export async function fateOf(
  chain: Chain,
  row: Pick<TransactionsTable, "tx_hash" | "nonce" | "from_address">,
  error: NodeRpcError,
  logger: Pick<Logger, "warn">,
): Promise<SendFate> {
  if (isAlreadyKnown(error)) return "taken";
  try {
    if ((await nodeRead(chain, "eth_getTransactionByHash", [row.tx_hash])) !== null) return "taken";
    const pending = await nonceOf(chain, row.from_address);
    if (pending > row.nonce) return "nonce_used";
    if (pending < row.nonce) return "waiting";
  } catch (lookup) {
    logger.warn({ err: lookup, tx: row.tx_hash }, "could not read the chain after a refused send");
    // Unread, the node's words decide, as before.
    if (isNonceConflict(error)) return "nonce_used";
  }
  return "refused";
}
