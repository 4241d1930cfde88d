/** personal_unlockAccount: a custody address unlocked with its password, for a duration. */
import type { SignerHandler } from "./handler.js";

export const personalUnlockAccount: SignerHandler = async (kit, _chain, params, { owner }) => {
  const [address, password, duration] = params as [string, string, string | number | undefined];
  const seconds = duration === undefined || duration === null ? undefined : Number(BigInt(duration));
  await kit.options.accounts.unlock(owner, address, password, seconds);
  return true;
};
