/** The highest block of a chain that is final by its rule, as the pool's upstream sees it (the quorum re-checks). */
import type { Finality } from "../config/config.js";
import type { Chain } from "../upstream/chain-registry.js";
import { headOf } from "./head-of.js";

/** -1 when nothing is final yet (a chain with no finalized block). */
export async function finalBlock(chain: Chain, finality: Finality): Promise<number> {
  if (finality !== "finalized") return (await headOf(chain)) - (finality - 1);
  const block = (await chain.pool.call({ method: "eth_getBlockByNumber", params: ["finalized", false] })) as {
    number?: unknown;
  } | null;
  return typeof block?.number === "string" ? Number(BigInt(block.number)) : -1;
}
