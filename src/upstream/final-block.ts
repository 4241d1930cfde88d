/** The highest block of a chain that is final by its rule: through the pool (the scan), or on one upstream (the quorum). */
import type { Finality } from "../config/config.js";
import type { Chain } from "./chain-registry.js";
import { headOf, type NodeMethod, type NodeMethods, nodeRead } from "./node-reads.js";

/** A typed node read, through the pool or on one upstream. */
export type Ask = <M extends NodeMethod>(
  method: M,
  params: NodeMethods[M]["params"],
) => Promise<NodeMethods[M]["result"]>;

/** -1 when nothing is final yet (a node with no finalized block, or no notion of one). */
export async function finalBlockBy(ask: Ask, finality: Finality): Promise<number> {
  if (finality === "finalized") {
    const block = await ask("eth_getBlockByNumber", ["finalized", false]);
    return typeof block?.number === "string" ? Number(BigInt(block.number)) : -1;
  }
  return Number(BigInt(await ask("eth_blockNumber", []))) - (finality - 1);
}

/** As the pool's upstream sees it; the head read is noted in the chain's head so caches know that block. */
export async function finalBlock(chain: Chain, finality: Finality): Promise<number> {
  if (finality !== "finalized") return (await headOf(chain)) - (finality - 1);
  return finalBlockBy((method, params) => nodeRead(chain, method, params), finality);
}
