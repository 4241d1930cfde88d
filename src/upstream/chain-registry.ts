/** The configured chains by id, and the rule that picks one from a request's `chain_id` or `X-Chain-Id`. */
import { invalidRequest, unknownChain } from "../errors/rpc-errors.js";
import type { HeadTracker } from "./head-tracker.js";
import type { UpstreamPool } from "./upstream-pool.js";

export interface Chain {
  readonly chainId: number;
  readonly name: string;
  readonly pool: UpstreamPool;
  /** Absent only in tests that build a chain by hand. */
  readonly head?: HeadTracker;
}

export class ChainRegistry {
  private readonly byId: ReadonlyMap<number, Chain>;

  constructor(
    chains: readonly Chain[],
    readonly homeChainId: number,
  ) {
    this.byId = new Map(chains.map((c) => [c.chainId, c]));
    if (!this.byId.has(homeChainId)) throw new Error(`home chain ${homeChainId} is not among the chains`);
  }

  get home(): Chain {
    return this.byId.get(this.homeChainId)!;
  }

  all(): Chain[] {
    return [...this.byId.values()];
  }

  get(chainId: number): Chain | undefined {
    return this.byId.get(chainId);
  }

  /** Resolves the chain selector of a request (query wins only when it agrees with the header). */
  select(query: unknown, header: unknown): Chain {
    const fromQuery = parseChainSelector(query, "chain_id");
    const fromHeader = parseChainSelector(header, "X-Chain-Id");
    if (fromQuery !== undefined && fromHeader !== undefined && fromQuery !== fromHeader) {
      throw invalidRequest(`chain_id ${fromQuery} and X-Chain-Id ${fromHeader} disagree`);
    }
    const chainId = fromQuery ?? fromHeader;
    if (chainId === undefined) return this.home;
    const chain = this.byId.get(chainId);
    if (!chain) throw unknownChain(String(chainId), [...this.byId.keys()]);
    return chain;
  }
}

/** Accepts a decimal or 0x-hex chain id; anything else is an invalid request, not the home chain. */
export function parseChainSelector(raw: unknown, name: string): number | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (typeof text !== "string" && typeof text !== "number")
    throw invalidRequest(`${name} must be a chain id`);
  const value = String(text).trim();
  let id: number;
  if (/^0x[0-9a-fA-F]{1,13}$/.test(value)) id = Number.parseInt(value.slice(2), 16);
  else if (/^[0-9]{1,15}$/.test(value)) id = Number(value);
  else throw invalidRequest(`${name} must be a decimal or 0x-hex chain id, got "${value.slice(0, 40)}"`);
  if (!Number.isSafeInteger(id) || id <= 0) throw invalidRequest(`${name} must be a positive chain id`);
  return id;
}
