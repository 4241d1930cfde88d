/** Start-up of keystore custody: the key deriver, the unlock cache (pruned, cleared at stop), the wallet service. */
import type { Config } from "../config/config.js";
import { KeyDeriver } from "../keys/kdf.js";
import { UnlockCache } from "../keys/unlock-cache.js";
import { PRUNE_MS, startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import { WalletService } from "./wallet-service.js";

export function startWallets(
  config: Config,
  deps: {
    store: Store;
    onAddressesCreated?: ((addresses: readonly string[]) => Promise<void>) | undefined;
  } & Lifecycle,
): { wallets: WalletService; deriver: KeyDeriver } {
  const cache = new UnlockCache(config.unlockCacheMs);
  startPeriodic({ name: "unlock cache prune", everyMs: PRUNE_MS, run: () => cache.prune() }, deps);
  deps.shutdown.add("unlock cache", () => cache.clear());
  const deriver = new KeyDeriver(config.scryptConcurrency);
  const wallets = new WalletService({
    store: deps.store,
    deriver,
    cache,
    kdf: config.kdf,
    maxAddresses: config.maxAddressesPerWallet,
    ...(deps.onAddressesCreated ? { onAddressesCreated: deps.onAddressesCreated } : {}),
  });
  return { wallets, deriver };
}
