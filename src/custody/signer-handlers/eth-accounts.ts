/** eth_accounts: the caller's custody addresses (and, with the devnet switch, the node's own). */
import { nodeRead } from "../../upstream/node-reads.js";
import type { SignerHandler } from "./handler.js";

export const ethAccounts: SignerHandler = async (kit, chain, _params, { owner }) => {
  const own = await kit.options.accounts.addresses(owner);
  if (!kit.options.nodeAccounts) return own;
  const node = await nodeRead(chain, "eth_accounts", []);
  return [...own, ...node];
};
