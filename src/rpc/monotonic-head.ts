/** The head never goes back: what chaingate answers for the latest block is never below the highest head it (or an instance beside it) has seen. */
import type { Chain } from "../upstream/chain-registry.js";
import { fieldOf, nodeRead } from "../upstream/node-reads.js";

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * eth_blockNumber: the node's answer, or the highest head known when the node answering is behind
 * it (an upstream that lags, or another instance that polled a moment later).
 */
export function blockNumberNotBehind(chain: Chain, result: unknown): unknown {
  const highest = chain.head?.highest;
  if (highest === undefined || typeof result !== "string" || !/^0x[0-9a-fA-F]+$/.test(result)) return result;
  return Number.parseInt(result.slice(2), 16) < highest ? hex(highest) : result;
}

/**
 * eth_getBlockByNumber("latest"): a block below the highest head known is asked again by that
 * number (the pool asks an upstream that has it); answered as first given when none has it yet.
 */
export async function latestBlockNotBehind(
  chain: Chain,
  params: readonly unknown[],
  result: unknown,
): Promise<unknown> {
  const highest = chain.head?.highest;
  const number = fieldOf(result, "number");
  if (highest === undefined || typeof number !== "string" || Number.parseInt(number.slice(2), 16) >= highest)
    return result;
  const newer = await nodeRead(chain, "eth_getBlockByNumber", [hex(highest), params[1] === true]);
  return newer ?? result;
}
