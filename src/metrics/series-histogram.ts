/** A Prometheus histogram whose labelled series observe into plain arrays on the request path, read at scrape time. */
import type { Metric, Registry } from "prom-client";

/** One labelled series: `observe()` is a bucket search and three additions. */
export class HistogramSeries {
  /** Observations per bucket, not cumulative; the last slot is above every bound (+Inf only). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

interface ExposedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * prom-client's Histogram hashes the label object on every `observe`, even through `labels()`;
 * its bulk state cannot be added to from outside, so this histogram keeps its own and hands the
 * registry the same exposition prom-client's would (`_bucket` cumulative with `le`, `_sum`,
 * `_count`). It registers as a prom-client metric: the registry reads a metric through `get()`,
 * `reset()`, `name` and `type` only.
 */
export class SeriesHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, HistogramSeries>();
  private readonly bounds: readonly number[];

  constructor(
    readonly config: {
      name: string;
      help: string;
      buckets: readonly number[];
      registers: Registry[];
    },
  ) {
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    // The registry's Metric type names prom-client's four classes; it uses only what this class has.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  get name(): string {
    return this.config.name;
  }

  get help(): string {
    return this.config.help;
  }

  /** The series for these label values; callers keep it (the values must come from a bounded set). */
  for(labels: Readonly<Record<string, string>>): HistogramSeries {
    const key = JSON.stringify(labels);
    let one = this.series.get(key);
    if (one === undefined) {
      one = new HistogramSeries(labels, this.bounds);
      this.series.set(key, one);
    }
    return one;
  }

  reset(): void {
    for (const one of this.series.values()) {
      one.counts.fill(0);
      one.sum = 0;
      one.count = 0;
    }
  }

  async get(): Promise<{
    name: string;
    help: string;
    type: "histogram";
    aggregator: "sum";
    values: ExposedValue[];
  }> {
    const values: ExposedValue[] = [];
    const { name } = this.config;
    for (const one of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += one.counts[i]!;
        values.push({
          labels: { ...one.labels, le: bound },
          value: cumulative,
          metricName: `${name}_bucket`,
        });
      });
      values.push({ labels: { ...one.labels, le: "+Inf" }, value: one.count, metricName: `${name}_bucket` });
      values.push({ labels: { ...one.labels }, value: one.sum, metricName: `${name}_sum` });
      values.push({ labels: { ...one.labels }, value: one.count, metricName: `${name}_count` });
    }
    return { name, help: this.config.help, type: this.type, aggregator: this.aggregator, values };
  }
}
