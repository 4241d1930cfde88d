/** Start-up of the gateway-owned filters and subscriptions: the pending pool, the filter sweep, the hub. */
import type { Config } from "../config/config.js";
import { startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { FilterService } from "./filter-service.js";
import { LogQuery } from "./log-query.js";
import { PendingPool } from "./pending-pool.js";
import { ResumableSubscriptions } from "./resumable-subscriptions.js";
import { SubscriptionHub } from "./subscription-hub.js";

export interface Filters {
  filters: FilterService;
  logs: LogQuery;
  hub: SubscriptionHub;
  resumable: ResumableSubscriptions;
}

export async function startFilters(
  config: Config,
  deps: {
    store: Store;
    chains: ChainRegistry;
    /** This instance's share of a per-key cap (InstanceRegistry.share). */
    share?: (cap: number) => number;
  } & Lifecycle,
): Promise<Filters> {
  const { store, chains, logger, shutdown } = deps;
  const idleMs = config.filterIdleMs;
  const pending = new PendingPool({ store, chains, logger, pollMs: config.headPollMs, retainMs: idleMs });
  await pending.start();
  shutdown.add("pending pool", () => pending.stop());
  const logs = new LogQuery(config.limits);
  const filters = new FilterService({
    store,
    pending,
    idleMs,
    logs,
    maxPerTenant: config.limits.filtersPerKey,
  });
  startPeriodic(
    { name: "filter sweep", everyMs: Math.min(30_000, idleMs), run: () => filters.sweep() },
    deps,
  );
  const hub = new SubscriptionHub(
    logger,
    config.headPollMs,
    pending,
    config.limits.subscriptionsPerKey,
    deps.share,
  );
  const resumable = new ResumableSubscriptions(hub, store);
  // Steps run in reverse: the hub stops sending first, then what its streams sent is recorded, so
  // a client of this instance resumes on another from its last cursor (decision 240).
  shutdown.add("subscription stream records", () => resumable.flush());
  shutdown.add("subscriptions", () => hub.close());
  startPeriodic({ name: "subscription stream prune", everyMs: 60_000, run: () => resumable.prune() }, deps);
  return { filters, logs, hub, resumable };
}
