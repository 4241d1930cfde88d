/** Start-up of keystore custody: the key deriver, the unlock cache (pruned, cleared at stop), the wallet service. */
import type { Config } from "../config/config.js";
import { KeyDeriver } from "../keys/kdf.js";
import { Pkcs11Token } from "../keys/pkcs11-token.js";
import { UnlockCache } from "../keys/unlock-cache.js";
import { PRUNE_MS, startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import type { ReadinessMonitor } from "../upstream/readiness.js";
import { WalletService } from "./wallet-service.js";

export function startWallets(
  config: Config,
  deps: {
    store: Store;
    onAddressesCreated?: ((addresses: readonly string[]) => Promise<void>) | undefined;
    readiness?: ReadinessMonitor;
  } & Lifecycle,
): { wallets: WalletService; deriver: KeyDeriver; hsm: Pkcs11Token | undefined } {
  const cache = new UnlockCache(config.unlockCacheMs);
  startPeriodic({ name: "unlock cache prune", everyMs: PRUNE_MS, run: () => cache.prune() }, deps);
  deps.shutdown.add("unlock cache", () => cache.clear());
  const deriver = new KeyDeriver(config.scryptConcurrency);
  const hsm = startToken(config, deps);
  const wallets = new WalletService({
    hsm,
    store: deps.store,
    deriver,
    cache,
    kdf: config.kdf,
    maxAddresses: config.maxAddressesPerWallet,
    ...(deps.onAddressesCreated ? { onAddressesCreated: deps.onAddressesCreated } : {}),
  });
  return { wallets, deriver, hsm };
}

/** How often a token that is not usable is opened again (it was absent, its PIN file fixed, its module back). */
const TOKEN_RETRY_MS = 5_000;

/**
 * The PKCS#11 token, when configured: opened at start (a token that cannot be opened leaves the
 * service up, not ready, and is tried again), named by /readyz while it is not usable.
 */
function startToken(
  config: Config,
  deps: { readiness?: ReadinessMonitor } & Lifecycle,
): Pkcs11Token | undefined {
  const options = config.custody.pkcs11;
  if (options === undefined) return undefined;
  const token = new Pkcs11Token(options);
  const open = () =>
    token
      .open()
      .catch((error: unknown) =>
        deps.logger.warn({ err: { message: (error as Error).message } }, "PKCS#11 token not usable"),
      );
  void open();
  startPeriodic(
    { name: "pkcs11 token", everyMs: TOKEN_RETRY_MS, run: async () => (token.problem ? open() : undefined) },
    deps,
  );
  deps.readiness?.require("pkcs11 token", () =>
    token.problem === undefined ? undefined : `PKCS#11 token "${options.token}": ${token.problem}`,
  );
  deps.shutdown.add("pkcs11 token", () => token.close());
  return token;
}
