/** What the relayer needs of a source chain before it moves value: its finality rule and upstream quorum. */
import type { Config, Finality } from "../config/config.js";

export interface ChainTrust {
  finality: Finality;
  /** Upstreams that must confirm; undefined: every usable one, and at least 2 where 2 or more are configured. */
  quorum: number | undefined;
  /** Where the finality rule came from, for the start-up log and the docs. */
  source: "config" | "embedded" | "known chain" | "development chain" | "other chain";
}

/**
 * Chains whose nodes serve a `finalized` block tag that means economic finality (proof of stake,
 * or an L2 whose finalized block follows its L1's). Their ids are public; the list is the docs' table.
 */
const FINALIZED_TAG_CHAINS: ReadonlyMap<number, string> = new Map([
  [1, "Ethereum"],
  [11155111, "Sepolia"],
  [17000, "Holesky"],
  [560048, "Hoodi"],
  [100, "Gnosis"],
  [10200, "Chiado"],
  [10, "OP Mainnet"],
  [8453, "Base"],
  [42161, "Arbitrum One"],
  [137, "Polygon PoS"],
]);

/** Chain ids development nodes (Hardhat, anvil, Ganache, geth --dev) use: one block is as final as it gets. */
const DEVELOPMENT_CHAINS = new Set([31337, 1337]);

/**
 * Any other chain (a consortium chain on clique, QBFT or IBFT, or a chain we do not know): a depth
 * rather than the `finalized` tag, which such nodes answer inconsistently (some with the head itself).
 * 64 blocks is two Ethereum epochs, the distance at which a proof-of-stake chain finalizes.
 */
export const OTHER_CHAIN_DEPTH = 64;

export function chainTrust(config: Config, chainId: number): ChainTrust {
  if (config.chains === undefined)
    return { finality: config.confirmations, quorum: undefined, source: "embedded" };
  const entry =
    config.chains.find((c) => c.chainId === chainId) ??
    // CHAINGATE_UPSTREAMS names one chain without an id: it is the one discovered.
    (config.chains.length === 1 && config.chains[0]!.chainId === undefined ? config.chains[0] : undefined);
  const quorum = entry?.quorum;
  if (entry?.finality !== undefined) return { finality: entry.finality, quorum, source: "config" };
  if (FINALIZED_TAG_CHAINS.has(chainId)) return { finality: "finalized", quorum, source: "known chain" };
  if (DEVELOPMENT_CHAINS.has(chainId))
    return { finality: config.confirmations, quorum, source: "development chain" };
  return { finality: Math.max(config.confirmations, OTHER_CHAIN_DEPTH), quorum, source: "other chain" };
}

/** The rule in words, for logs and refusals. */
export function describeFinality(finality: Finality): string {
  return finality === "finalized" ? "the finalized block" : `${finality} confirmation(s)`;
}
