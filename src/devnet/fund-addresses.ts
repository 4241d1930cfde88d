/** Devnet only: gives new custody addresses ether on every embedded chain, so they can send at once. */
import { parseEther, toHex } from "viem";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { nodeRead } from "../upstream/node-reads.js";

export const DEVNET_FUNDING = parseEther("100");

/**
 * Uses anvil_setBalance (adding to what the address holds) rather than transfers from the dev
 * accounts: it mines no block and takes no nonce, so funding never races the dev accounts' own
 * transactions, and the devnet never runs dry however many wallets are made.
 */
export function devnetFunder(chains: ChainRegistry): (addresses: readonly string[]) => Promise<void> {
  return async (addresses) => {
    await Promise.all(
      chains.all().flatMap((chain) =>
        addresses.map(async (address) => {
          const balance = BigInt(await nodeRead(chain, "eth_getBalance", [address, "latest"]));
          await nodeRead(chain, "anvil_setBalance", [address, toHex(balance + DEVNET_FUNDING)]);
        }),
      ),
    );
  };
}
