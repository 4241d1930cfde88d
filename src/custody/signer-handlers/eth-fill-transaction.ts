/** eth_fillTransaction: a custody address's transaction filled as chaingate would sign it now (anyone else's goes to the node). */
import type { TransactionObject } from "../transaction-request.js";
import type { SignerHandler } from "./handler.js";

export const ethFillTransaction: SignerHandler = async (kit, chain, params, { owner }) => {
  const tx = params[0] as Partial<TransactionObject>;
  const holder = tx.from === undefined ? undefined : await kit.options.accounts.holder(owner, tx.from);
  // Not the tenant's custody address: the node fills it as it would for anyone.
  if (holder === undefined) return chain.pool.call({ method: "eth_fillTransaction", params: [...params] });
  return kit.fill(chain, { ...tx, from: tx.from! }, owner, holder.walletId);
};
