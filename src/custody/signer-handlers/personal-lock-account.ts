/** personal_lockAccount: a custody address's unlock ended. */
import type { SignerHandler } from "./handler.js";

export const personalLockAccount: SignerHandler = async (kit, _chain, params, { owner }) => {
  await kit.options.accounts.lock(owner, params[0] as string);
  return true;
};
