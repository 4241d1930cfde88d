/** Start-up of every configured chain: upstream pools resolved, heads polled and pushed, readiness watched. */
import type { Config } from "../config/config.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { startPeriodic } from "../lifecycle/periodic-task.js";
import type { Lifecycle } from "../lifecycle/shutdown.js";
import type { TraitsOf } from "./call-traits.js";
import { type Chain, ChainRegistry } from "./chain-registry.js";
import { ReadinessMonitor } from "./readiness.js";
import { type ChainEntry, resolveChain } from "./resolve-chain.js";
import { WsHeadWatcher } from "./ws-head-watcher.js";

export interface ChainStartEntry extends ChainEntry {
  /** A WebSocket URL per upstream (in `urls` order) that pushes new heads, where one is configured. */
  ws?: (string | undefined)[];
}

/** The configured chains, or the embedded nodes when none is configured. */
export function chainEntries(
  config: Config,
  embedded: readonly { chainId: number; url: string }[],
): ChainStartEntry[] {
  if (config.chains === undefined) {
    return embedded.map((n) => ({ chainId: n.chainId, name: `devnet-${n.chainId}`, urls: [n.url] }));
  }
  return config.chains.map((c) => ({
    ...(c.chainId === undefined ? {} : { chainId: c.chainId }),
    ...(c.name === undefined ? {} : { name: c.name }),
    urls: c.upstreams.map((u) => u.url),
    ws: c.upstreams.map((u) => u.ws),
    namespaces: new Map(c.upstreams.map((u) => [u.url, new Set(u.namespaces ?? [])])),
    ...(c.hedge === undefined ? {} : { hedge: c.hedge }),
    ...(c.quorum === undefined ? {} : { quorum: c.quorum }),
    ...(c.consensus === undefined
      ? {}
      : {
          consensus: {
            methods: new Map(Object.entries(c.consensus.methods)),
            onDisagreement: c.consensus.onDisagreement,
          },
        }),
  }));
}

export interface StartedChains {
  list: Chain[];
  registry: ChainRegistry;
  readiness: ReadinessMonitor;
}

export async function startChains(
  entries: readonly ChainStartEntry[],
  config: Config,
  deps: Lifecycle,
  /** The method table's traits the pools and node connections go by. */
  traits: TraitsOf,
): Promise<StartedChains> {
  const { logger, shutdown } = deps;
  const list = await Promise.all(
    entries.map((e) =>
      resolveChain(e, { timeoutMs: config.upstreamTimeoutMs, headPollMs: config.headPollMs, logger, traits }),
    ),
  );
  shutdown.add("upstream pools", async () => {
    await Promise.all(list.map((c) => c.pool.close()));
  });
  for (const chain of list) chain.head?.start();
  // Upstreams with a WebSocket push their new heads; polling carries on for health, lag and latency.
  const watchers = list.flatMap((chain, i) =>
    (entries[i]?.ws ?? []).flatMap((ws, j) => {
      const label = chain.pool.upstreams[j]?.label;
      if (ws === undefined || label === undefined) return [];
      return [
        new WsHeadWatcher({
          url: ws,
          logger,
          onHead: (head) => {
            if (chain.pool.noteHead(label, head)) chain.head?.observe(head);
          },
        }),
      ];
    }),
  );
  for (const watcher of watchers) watcher.start();
  shutdown.add("head watchers", () => {
    for (const watcher of watchers) watcher.stop();
    for (const chain of list) chain.head?.stop();
  });
  const ids = list.map((c) => c.chainId);
  if (new Set(ids).size !== ids.length) {
    throw new ChaingateError(`two configured chains are the same chain (ids ${ids.join(", ")})`, {
      code: "CHAIN_ID_MISMATCH",
    });
  }
  probeHistories(list, deps);
  const registry = new ChainRegistry(list, config.homeChainId ?? list[0]!.chainId);
  const readiness = new ReadinessMonitor(registry, 1_000, logger);
  await readiness.check();
  readiness.start();
  shutdown.add("readiness", () => readiness.stop());
  return { list, registry, readiness };
}

/** A pruned node's oldest block moves up as its chain grows: probed again this often. */
const HISTORY_PROBE_MS = 10 * 60_000;

/**
 * Where a chain has two or more upstreams, each one's oldest block with state is probed once its
 * head is known, then every few minutes, so reads at old blocks go where the state is (decision
 * 151). A chain with one upstream has nowhere else to send them: it learns from answers alone.
 */
function probeHistories(list: readonly Chain[], deps: Lifecycle): void {
  const routed = list.filter((c) => c.pool.upstreams.length >= 2);
  if (routed.length === 0) return;
  const probe = async () => {
    await Promise.all(
      routed.map(async (c) => {
        // The search runs up to each upstream's own head: it is read first.
        await c.pool.pollHeads().catch(() => undefined);
        await c.pool.probeHistory();
      }),
    );
  };
  probe().catch((error: unknown) => deps.logger.warn({ err: error }, "probing upstream histories failed"));
  startPeriodic({ name: "upstream history probe", everyMs: HISTORY_PROBE_MS, run: probe }, deps);
}
