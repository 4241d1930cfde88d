/** A chain's block number as the relayer reads it, noted in the chain's head so caches know that block. */
import type { Chain } from "../upstream/chain-registry.js";

export async function headOf(chain: Chain): Promise<number> {
  const head = Number(BigInt(String(await chain.pool.call({ method: "eth_blockNumber", params: [] }))));
  chain.head?.observe(head);
  return head;
}
