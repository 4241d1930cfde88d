/** Start-up of signing for JSON-RPC clients: unlocked addresses (pruned, forgotten at stop) and custody accounts. */
import type { Config } from "../config/config.js";
import { PRUNE_MS, startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import type { ReadinessMonitor } from "../upstream/readiness.js";
import type { WalletService } from "../wallets/wallet-service.js";
import { ClusterUnlocks } from "./cluster-unlocks.js";
import { CustodyAccounts } from "./custody-accounts.js";
import { SealKey } from "./seal-key.js";
import { sealKeyProblem } from "./seal-key-check.js";

/** How often the store is read again for keys sealed under another server key (another instance may seal at any time). */
const SEAL_CHECK_MS = 10_000;

export function startCustody(
  config: Config,
  deps: {
    store: Store;
    wallets: WalletService;
    readiness?: ReadinessMonitor;
    instanceId?: string;
  } & Lifecycle,
): CustodyAccounts {
  const { sealKey, unlockSeconds, unlockMaxSeconds } = config.custody;
  const key = sealKey === undefined ? undefined : new SealKey(sealKey);
  const unlocked = new ClusterUnlocks({
    store: deps.store,
    sealKey: key,
    ...(deps.instanceId === undefined ? {} : { instanceId: deps.instanceId }),
  });
  if (deps.store.bus.shared && key === undefined)
    deps.logger.warn(
      "several instances may share this store, but no server key is configured (CHAINGATE_SEAL_KEY_FILE): an unlock signs only on the instance that made it; give every instance the same server key",
    );
  startPeriodic({ name: "unlock prune", everyMs: PRUNE_MS, run: () => unlocked.prune() }, deps);
  // An instance whose server key cannot open the store's sealed keys is not ready, and says so.
  let problem: string | undefined;
  const checkKey = async () => {
    const found = await sealKeyProblem(deps.store, key);
    if (found !== undefined && found !== problem)
      deps.logger.error({ problem: found }, "server key mismatch: not ready");
    problem = found;
  };
  checkKey().catch((error: unknown) => deps.logger.warn({ err: error }, "could not check the server key"));
  startPeriodic({ name: "server key check", everyMs: SEAL_CHECK_MS, run: checkKey }, deps);
  deps.readiness?.require("server key", () => problem);
  deps.shutdown.add("unlocked accounts", () => unlocked.clear());
  return new CustodyAccounts({
    store: deps.store,
    wallets: deps.wallets,
    unlocked,
    sealKey: key,
    unlockSeconds,
    unlockMaxSeconds,
  });
}
