/** A chain's block number as the relayer reads it, noted in the chain's head so caches know that block. */

import type { Chain } from "../upstream/chain-registry.js";
import { headOf as askHead } from "../upstream/node-reads.js";

export async function headOf(chain: Chain): Promise<number> {
  const head = await askHead(chain);
  chain.head?.observe(head);
  return head;
}
