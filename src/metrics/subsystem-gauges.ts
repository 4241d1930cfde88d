/** The gauges read from each subsystem at scrape time: upstreams, the process's own state, and counts over the store. */
import { Gauge, type Registry } from "prom-client";
import type { SubscriptionHub } from "../filters/subscription-hub.js";
import type { KeyDeriver } from "../keys/kdf.js";
import type { ResponseCache } from "../rpc/response-cache.js";
import type { Store } from "../store/database.js";
import type { TxState } from "../store/schema.js";
import { stateLiterals } from "../store/state-literal.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import type { UpstreamStats } from "../upstream/upstream-pool.js";
import { BoundedRead } from "./bounded-read.js";

/** Transaction states the tracker is still moving: few at any time, counted at every scrape. */
const IN_FLIGHT_STATES = ["queued", "sent", "mined"] as const satisfies readonly TxState[];
/** States a transaction ends in: they grow with every transaction ever signed. */
const SETTLED_STATES = ["confirmed", "failed", "replaced", "dropped"] as const satisfies readonly TxState[];
/** A state added to TxState but to neither list would go uncounted: this stops the build instead. */
const EVERY_STATE_COUNTED: [
  Exclude<TxState, (typeof IN_FLIGHT_STATES)[number] | (typeof SETTLED_STATES)[number]>,
] extends [never]
  ? true
  : never = true;
void EVERY_STATE_COUNTED;

export interface GaugeSources {
  chains: ChainRegistry;
  store: Store;
  cache: ResponseCache;
  hub: SubscriptionHub;
  deriver: KeyDeriver;
}

export function registerSubsystemGauges(registers: Registry[], sources: GaugeSources): void {
  upstreamGauges(registers, sources.chains);
  processGauges(registers, sources);
  storeGauges(registers, sources.store);
}

/** Per chain and upstream, from each pool's own stats (no node call at scrape time). */
function upstreamGauges(registers: Registry[], chains: ChainRegistry): void {
  const gauges: [name: string, help: string, pick: (s: UpstreamStats) => number | null][] = [
    ["chaingate_upstream_head", "Last block number each upstream reported", (s) => s.head],
    ["chaingate_upstream_lag_blocks", "Blocks each upstream is behind the pool's best head", (s) => s.lag],
    [
      "chaingate_upstream_latency_seconds",
      "Latency of each upstream's last head read",
      (s) => (s.latencyMs === null ? null : s.latencyMs / 1000),
    ],
    ["chaingate_upstream_answered", "Calls each upstream answered since start", (s) => s.answered],
    [
      "chaingate_upstream_faults",
      "Faults (timeouts, connection errors, 5xx, 429) per upstream since start",
      (s) => s.faults,
    ],
    [
      "chaingate_upstream_healthy",
      "1 when the upstream is verified and not in a cool-down after faults",
      (s) => (s.cooling || s.status !== "verified" ? 0 : 1),
    ],
    [
      "chaingate_upstream_hedges",
      "Reads this upstream was also asked because the first upstream had not answered in time (hedged reads)",
      (s) => s.hedges,
    ],
    [
      "chaingate_upstream_hedge_wins",
      "Hedged reads this upstream answered before the first upstream",
      (s) => s.hedgeWins,
    ],
    [
      "chaingate_upstream_oldest_state_block",
      "The oldest block whose state each upstream holds, as probed or learnt from its answers (0: every block asked)",
      (s) => s.oldestState,
    ],
    [
      "chaingate_upstream_quarantined",
      "1 when the upstream answers another chain id (it is never served from)",
      (s) => (s.status === "quarantined" ? 1 : 0),
    ],
  ];
  for (const [name, help, pick] of gauges) {
    new Gauge({
      name,
      help,
      labelNames: ["chain", "upstream"],
      registers,
      collect() {
        this.reset();
        for (const chain of chains.all()) {
          for (const s of chain.pool.stats()) {
            const value = pick(s);
            if (value !== null) this.set({ chain: String(chain.chainId), upstream: s.label }, value);
          }
        }
      },
    });
  }
}

/** The chain heads, the response cache, open subscriptions and the key derivation queue. */
function processGauges(registers: Registry[], sources: GaugeSources): void {
  const { chains, cache, hub, deriver } = sources;
  new Gauge({
    name: "chaingate_chain_head",
    help: "Latest head block seen per chain",
    labelNames: ["chain"],
    registers,
    collect() {
      this.reset();
      for (const chain of chains.all()) {
        // The highest head known, fresh or not: right after a send the head is read again shortly.
        const head = chain.head?.highest;
        if (head !== undefined) this.set({ chain: String(chain.chainId) }, head);
      }
    },
  });
  new Gauge({
    name: "chaingate_cache_lookups",
    help: "Response cache lookups since start, by result",
    labelNames: ["result"],
    registers,
    collect() {
      this.set({ result: "hit" }, cache.hits);
      this.set({ result: "miss" }, cache.misses);
    },
  });
  new Gauge({
    name: "chaingate_cache_entries",
    help: "Answers held in the response cache",
    registers,
    collect() {
      this.set(cache.size);
    },
  });
  new Gauge({
    name: "chaingate_subscriptions_open",
    help: "Open eth_subscribe subscriptions",
    registers,
    collect() {
      this.set(hub.size);
    },
  });
  new Gauge({
    name: "chaingate_scrypt_queue_length",
    help: "Key derivations waiting for a turn",
    registers,
    collect() {
      this.set(deriver.queued);
    },
  });
}

/**
 * Counts over tables that grow with use are bounded reads (see BoundedRead): a scrape must not
 * cost more as the store grows. Transactions still in flight (a bounded set) are counted at every
 * scrape, so a stuck one shows at once.
 */
function storeGauges(registers: Registry[], store: Store): void {
  const filtersByKind = new BoundedRead(() =>
    store.db
      .selectFrom("filters")
      .select((eb) => ["kind", eb.fn.countAll<number>().as("n")])
      .groupBy("kind")
      .execute(),
  );
  new Gauge({
    name: "chaingate_filters_open",
    help: "Installed filters (block, log, pending), all instances sharing the store",
    labelNames: ["kind"],
    registers,
    async collect() {
      const rows = await filtersByKind.get();
      this.reset();
      for (const row of rows) this.set({ kind: row.kind }, Number(row.n));
    },
  });
  const transactionsIn = (states: readonly TxState[]) => () =>
    store.db
      .selectFrom("transactions")
      .select((eb) => ["state", eb.fn.countAll<number>().as("n")])
      .where("state", "in", stateLiterals(states))
      .groupBy("state")
      .execute();
  const settledTransactions = new BoundedRead(transactionsIn(SETTLED_STATES));
  const inFlightTransactions = transactionsIn(IN_FLIGHT_STATES);
  new Gauge({
    name: "chaingate_transactions",
    help: "Signed transactions by state, all instances sharing the store",
    labelNames: ["state"],
    registers,
    async collect() {
      const [moving, settled] = await Promise.all([inFlightTransactions(), settledTransactions.get()]);
      this.reset();
      for (const row of [...moving, ...settled]) this.set({ state: row.state }, Number(row.n));
    },
  });
  const transportsByState = new BoundedRead(() =>
    store.db
      .selectFrom("transports")
      .select((eb) => ["kind", "state", eb.fn.countAll<number>().as("n")])
      .groupBy(["kind", "state"])
      .execute(),
  );
  new Gauge({
    name: "chaingate_transports",
    help: "Cross-chain transports by kind and state, all instances sharing the store",
    labelNames: ["kind", "state"],
    registers,
    async collect() {
      const rows = await transportsByState.get();
      this.reset();
      for (const row of rows) this.set({ kind: row.kind, state: row.state }, Number(row.n));
    },
  });
}
