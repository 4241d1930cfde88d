/** wallet_getCallsStatus (EIP-5792): a bundle's state and receipts, by its id. */
import type { SignerHandler } from "./handler.js";

export const walletGetCallsStatus: SignerHandler = async (kit, _chain, params, { owner }) =>
  kit.calls.status(owner, params[0] as string);
