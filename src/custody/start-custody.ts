/** Start-up of signing for JSON-RPC clients: unlocked addresses (pruned, forgotten at stop) and custody accounts. */
import type { Config } from "../config/config.js";
import { PRUNE_MS, startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import type { WalletService } from "../wallets/wallet-service.js";
import { CustodyAccounts } from "./custody-accounts.js";
import { SealKey } from "./seal-key.js";
import { UnlockedAccounts } from "./unlocked-accounts.js";

export function startCustody(
  config: Config,
  deps: { store: Store; wallets: WalletService } & Lifecycle,
): CustodyAccounts {
  const unlocked = new UnlockedAccounts();
  startPeriodic({ name: "unlock prune", everyMs: PRUNE_MS, run: () => unlocked.prune() }, deps);
  deps.shutdown.add("unlocked accounts", () => unlocked.clear());
  const { sealKey, unlockSeconds, unlockMaxSeconds } = config.custody;
  return new CustodyAccounts({
    store: deps.store,
    wallets: deps.wallets,
    unlocked,
    sealKey: sealKey === undefined ? undefined : new SealKey(sealKey),
    unlockSeconds,
    unlockMaxSeconds,
  });
}
