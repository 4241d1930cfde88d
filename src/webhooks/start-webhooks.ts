/** Start-up of webhooks: the endpoint store for the routes, the sender and the balance watch (started, stopped before the store closes). */
import type { Config } from "../config/config.js";
import { startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { Store } from "../store/database.js";
import { pruneHistory } from "../store/prune-history.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { BalanceWatch } from "./balance-watch.js";
import { WebhookSender } from "./webhook-sender.js";
import { WebhookStore } from "./webhook-store.js";

export function startWebhooks(config: Config, deps: { store: Store; chains: ChainRegistry } & Lifecycle) {
  const webhooks = new WebhookStore(deps.store, config.webhooks);
  const sender = new WebhookSender({ store: deps.store, logger: deps.logger, settings: config.webhooks });
  sender.start();
  deps.shutdown.add("webhook sender", () => sender.stop());
  const balances = new BalanceWatch({ store: deps.store, chains: deps.chains, logger: deps.logger });
  startPeriodic(
    { name: "balance watch", everyMs: config.webhooks.balanceCheckMs, run: () => balances.pass() },
    deps,
  );
  startPeriodic({ name: "history prune", everyMs: 3_600_000, run: () => pruneHistory(deps.store) }, deps);
  return { webhooks, sender, balances };
}
