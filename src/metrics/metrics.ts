/** Prometheus metrics: request counters and latencies, plus gauges read from each subsystem at scrape time. */
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { SubscriptionHub } from "../filters/subscription-hub.js";
import type { KeyDeriver } from "../keys/kdf.js";
import { METHODS_BY_NAME } from "../rpc/method-table.js";
import type { ResponseCache } from "../rpc/response-cache.js";
import type { Store } from "../store/database.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { registerAlertGauges } from "./alert-gauges.js";
import { RequestHistory } from "./request-history.js";
import { type CounterSeries, SeriesCounter } from "./series-counter.js";
import { type HistogramSeries, SeriesHistogram } from "./series-histogram.js";
import { registerSubsystemGauges } from "./subsystem-gauges.js";

export interface MetricsSources {
  chains: ChainRegistry;
  store: Store;
  /** A chain's configured quorum (see alert-gauges.ts). */
  quorumOf?: (chainId: number) => number | undefined;
  cache: ResponseCache;
  hub: SubscriptionHub;
  deriver: KeyDeriver;
}

/** A route's, method's and status's request counter and its route's duration histogram. */
interface RequestSeries {
  count: CounterSeries;
  time: HistogramSeries;
}

export class Metrics {
  readonly registry = new Registry();
  /** The last ten minutes by ten seconds, for the console's chart (GET /metrics/recent). */
  readonly history = new RequestHistory();
  private readonly requests: SeriesCounter;
  private readonly duration: SeriesHistogram;
  private readonly rpcCalls: SeriesCounter;
  private readonly fastAnswers: CounterSeries;
  /**
   * The labelled series each request counts in (the series themselves count in plain numbers, read
   * at scrape time), by route, then method, then status: looked up by the strings and the number a
   * request already has, not by a key joined per request, which a cache hit spent more on joining
   * and hashing than on counting. The label values are bounded (route patterns, HTTP methods,
   * statuses, the method table), so these maps are too.
   */
  private readonly requestSeries = new Map<string, Map<string, Map<number, RequestSeries>>>();
  private readonly rpcSeries = new Map<string, CounterSeries>();
  /** The access log's dropped lines (logging/access-log.ts), read at scrape time; none while it is off. */
  private accessLogDrops: () => number = () => 0;

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
      help: "Requests answered before the framework's per-request pipeline (node reads on POST / and Native cache hits, POST /transaction)",
      labelNames: [],
      registers,
    }).for({});
    registerSubsystemGauges(registers, sources);
    const drops = () => this.accessLogDrops();
    new Gauge({
      name: "chaingate_access_log_dropped_lines",
      help: "Access-log lines dropped since start because the log's reader fell behind (16 MiB held for it)",
      registers,
      collect() {
        this.set(drops());
      },
    });
  }

  /** Where the access log's dropped lines are read from (the composition root's access log). */
  readAccessLogDrops(read: () => number): void {
    this.accessLogDrops = read;
  }

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.requestSeries.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.requestSeries.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        count: this.requests.for({ route, method, status: String(status) }),
        time: this.duration.for({ route }),
      };
      byStatus.set(status, series);
    }
    series.count.inc();
    series.time.observe(seconds);
    this.history.record(status);
  }

  /** A request answered by a fast path (http/read-fast-path.ts, http/transaction-fast-path.ts); it also counts as a request. */
  observeFastAnswer(route: string, seconds: number, status = 200): void {
    this.fastAnswers.inc();
    this.observeRequest(route, "POST", status, seconds);
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
