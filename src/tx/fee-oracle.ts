/** Current fees per chain: EIP-1559 where blocks carry a base fee, legacy gas price otherwise. */
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead } from "../upstream/node-reads.js";

export type Fees =
  | { type: "eip1559"; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; baseFee: bigint }
  | { type: "legacy"; gasPrice: bigint };

const ONE_GWEI = 1_000_000_000n;

/** Fees change once per block; a short cache saves two node calls on every transaction of a burst. */
export class FeeOracle {
  private readonly cache = new Map<number, { at: number; fees: Promise<Fees> }>();

  constructor(
    private readonly ttlMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(chain: Chain): Promise<Fees> {
    const hit = this.cache.get(chain.chainId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.fees;
    const fees = this.fetch(chain);
    this.cache.set(chain.chainId, { at: this.now(), fees });
    fees.catch(() => this.cache.delete(chain.chainId));
    return fees;
  }

  private async fetch(chain: Chain): Promise<Fees> {
    const block = await nodeRead(chain, "eth_getBlockByNumber", ["latest", false]);
    if (block?.baseFeePerGas !== undefined) {
      const baseFee = BigInt(block.baseFeePerGas);
      let priority = ONE_GWEI;
      try {
        priority = BigInt(await nodeRead(chain, "eth_maxPriorityFeePerGas", []));
      } catch {
        // Nodes without eth_maxPriorityFeePerGas: 1 gwei is the common default tip.
      }
      // Twice the base fee survives six full blocks of base-fee growth before the cap binds.
      return {
        type: "eip1559",
        baseFee,
        maxPriorityFeePerGas: priority,
        maxFeePerGas: baseFee * 2n + priority,
      };
    }
    return {
      type: "legacy",
      gasPrice: BigInt(await nodeRead(chain, "eth_gasPrice", [])),
    };
  }
}
