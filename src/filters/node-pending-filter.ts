/** Pending-transaction hashes from a filter on one node, installed anew on another node when that one loses it. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { NodeRpcError } from "../rpc/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";

/** Which node holds the filter and its id there, as "upstream label|filter id". */
export type NodeFilterRef = string;

export async function installNodePendingFilter(chain: Chain): Promise<NodeFilterRef> {
  const { label, result } = await chain.pool.callAny({
    method: "eth_newPendingTransactionFilter",
    params: [],
  });
  return `${label}|${String(result)}`;
}

/**
 * New hashes since the last read. When the node forgot the filter (restart, expiry) or is gone,
 * a new filter is installed wherever a node answers and reading carries on from now.
 */
export async function readNodePendingFilter(
  chain: Chain,
  ref: NodeFilterRef,
): Promise<{ hashes: string[]; ref: NodeFilterRef }> {
  const [label = "", id = ""] = ref.split("|");
  try {
    const hashes = await chain.pool.callOn(label, { method: "eth_getFilterChanges", params: [id] });
    return { hashes: hashes as string[], ref };
  } catch (error) {
    if (error instanceof NodeRpcError || (error instanceof ChaingateError && error.retryable)) {
      return { hashes: [], ref: await installNodePendingFilter(chain) };
    }
    throw error;
  }
}
