/** wallet_getCapabilities (EIP-5792): what the custody bundles can do on each chain, for the caller's address. */
import type { SignerHandler } from "./handler.js";

export const walletGetCapabilities: SignerHandler = async (kit, _chain, params, { owner }) =>
  kit.calls.capabilities(owner, params[0] as string, params[1] as string[] | undefined);
