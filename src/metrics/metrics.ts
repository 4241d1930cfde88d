/** Prometheus metrics: request counters and latencies, plus gauges read from each subsystem at scrape time. */
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { SubscriptionHub } from "../filters/subscription-hub.js";
import type { KeyDeriver } from "../keys/kdf.js";
import { METHODS_BY_NAME } from "../rpc/method-table.js";
import type { ResponseCache } from "../rpc/response-cache.js";
import type { Store } from "../store/database.js";
import type { TxState } from "../store/schema.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import type { UpstreamStats } from "../upstream/upstream-pool.js";
import { registerAlertGauges } from "./alert-gauges.js";
import { BoundedRead } from "./bounded-read.js";
import { type CounterSeries, SeriesCounter } from "./series-counter.js";
import { type HistogramSeries, SeriesHistogram } from "./series-histogram.js";

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

export interface MetricsSources {
  chains: ChainRegistry;
  store: Store;
  /** A chain's configured quorum (see alert-gauges.ts). */
  quorumOf?: (chainId: number) => number | undefined;
  cache: ResponseCache;
  hub: SubscriptionHub;
  deriver: KeyDeriver;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: SeriesCounter;
  private readonly duration: SeriesHistogram;
  private readonly rpcCalls: SeriesCounter;
  private readonly fastAnswers: CounterSeries;
  /**
   * The labelled series each request counts in, looked up once by a plain string key (the series
   * themselves count in plain numbers, read at scrape time). The label values are bounded (route
   * patterns, HTTP methods, statuses, the method table), so these maps are too.
   */
  private readonly requestSeries = new Map<string, { count: CounterSeries; time: HistogramSeries }>();
  private readonly rpcSeries = new Map<string, CounterSeries>();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    registerAlertGauges(registers, sources);
    collectDefaultMetrics({ register: this.registry, prefix: "chaingate_" });
    this.requests = new SeriesCounter({
      name: "chaingate_http_requests_total",
      help: "HTTP requests by route, HTTP method and status",
      labelNames: ["route", "method", "status"],
      registers,
    });
    this.duration = new SeriesHistogram({
      name: "chaingate_http_request_duration_seconds",
      help: "HTTP request latency by route",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.rpcCalls = new SeriesCounter({
      name: "chaingate_rpc_calls_total",
      help: "JSON-RPC calls (Native paths, POST /, WebSocket) by method and outcome",
      labelNames: ["method", "outcome"],
      registers,
    });
    this.fastAnswers = new SeriesCounter({
      name: "chaingate_http_fast_path_answers_total",
      help: "Node reads on POST / answered before the framework's per-request pipeline (request logging off)",
      labelNames: [],
      registers,
    }).for({});
    const { chains, store, cache, hub, deriver } = sources;
    const upstreamGauges: [name: string, help: string, pick: (s: UpstreamStats) => number | null][] = [
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
    for (const [name, help, pick] of upstreamGauges) {
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
    // Counts over tables that grow with use are bounded reads (see BoundedRead): a scrape must not
    // cost more as the store grows. Transactions still in flight (a bounded set) are counted at
    // every scrape, so a stuck one shows at once.
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
        .where("state", "in", states)
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

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let series = this.requestSeries.get(key);
    if (series === undefined) {
      series = {
        count: this.requests.for({ route, method, status: String(status) }),
        time: this.duration.for({ route }),
      };
      this.requestSeries.set(key, series);
    }
    series.count.inc();
    series.time.observe(seconds);
  }

  /** A read answered by the fast path (http/read-fast-path.ts); it also counts as a request. */
  observeFastAnswer(route: string, seconds: number): void {
    this.fastAnswers.inc();
    this.observeRequest(route, "POST", 200, seconds);
  }

  /** Methods outside the table share one label, so a client cannot grow the series without bound. */
  observeRpcCall(method: string, ok: boolean): void {
    const name = METHODS_BY_NAME.has(method) ? method : "other";
    const key = ok ? name : `${name} error`;
    let series = this.rpcSeries.get(key);
    if (series === undefined) {
      series = this.rpcCalls.for({ method: name, outcome: ok ? "ok" : "error" });
      this.rpcSeries.set(key, series);
    }
    series.inc();
  }
}
