/** What a chain's nodes can take, learnt before anything is signed for it: EIP-7702 (Prague), from eth_config where served, else from its latest block. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { MethodNotServedError } from "../errors/rpc-errors.js";
import type { Chain } from "./chain-registry.js";
import { fieldOf, nodeRead } from "./node-reads.js";

export interface ChainFeatures {
  /** Type-4 transactions and EIP-7702 authorizations (the Prague fork). */
  prague: boolean;
  /** Where it was read: `eth_config` (EIP-7910) or the latest block's header (`requestsHash`, EIP-7685). */
  from: "eth_config" | "block";
}

/** A chain without a feature is asked again after this long (it may have forked since); one with it is not. */
const RECHECK_MS = 10 * 60_000;

const known = new WeakMap<Chain, { at: number; features: Promise<ChainFeatures> }>();

/** The chain's features, probed once and remembered (a negative answer for RECHECK_MS). */
export function chainFeatures(chain: Chain, now = Date.now()): Promise<ChainFeatures> {
  const entry = known.get(chain);
  if (entry !== undefined) {
    const settled = entry.features.then(
      (f) => f.prague || now - entry.at < RECHECK_MS,
      () => false,
    );
    return settled.then((fresh) => (fresh ? entry.features : probe(chain, now)));
  }
  return probe(chain, now);
}

function probe(chain: Chain, now: number): Promise<ChainFeatures> {
  const features = readFeatures(chain);
  known.set(chain, { at: now, features });
  // A probe that failed (node down) is not remembered: the next signature asks again.
  features.catch(() => known.delete(chain));
  return features;
}

async function readFeatures(chain: Chain): Promise<ChainFeatures> {
  try {
    const config = await nodeRead(chain, "eth_config", []);
    // Prague's precompiles are the BLS12-381 ones (EIP-2537).
    const precompiles = fieldOf(fieldOf(config, "current"), "precompiles");
    const names = typeof precompiles === "object" && precompiles !== null ? Object.keys(precompiles) : [];
    return { prague: names.some((name) => name.startsWith("BLS12")), from: "eth_config" };
  } catch (error) {
    if (!(error instanceof MethodNotServedError)) throw error;
  }
  const block = await nodeRead(chain, "eth_getBlockByNumber", ["latest", false]);
  return { prague: typeof block?.requestsHash === "string", from: "block" };
}

/** Refuses, before anything is signed or reserved, what the chain cannot take. */
export async function requirePrague(chain: Chain, what: string): Promise<void> {
  const features = await chainFeatures(chain);
  if (features.prague) return;
  throw new ChaingateError(
    `chain ${chain.chainId} (${chain.name}) cannot take ${what}: its nodes lack Prague (EIP-7702; read from ${
      features.from === "eth_config" ? "eth_config" : "the latest block, which has no requestsHash"
    }); nothing was signed`,
    { code: "CHAIN_LACKS_FEATURE", data: { chain_id: chain.chainId, feature: "eip7702" } },
  );
}
