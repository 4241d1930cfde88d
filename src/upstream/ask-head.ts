/** The chain's head as the node says it now (eth_blockNumber through the pool), as a number. */
import type { Chain } from "./chain-registry.js";

export async function askHead(chain: Chain): Promise<number> {
  return Number(BigInt(String(await chain.pool.call({ method: "eth_blockNumber", params: [] }))));
}
