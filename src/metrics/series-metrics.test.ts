import fc from "fast-check";
import parsePrometheus from "parse-prometheus-text-format";
import { Counter, Histogram, Registry } from "prom-client";
import { expect, it } from "vitest";
import { SeriesCounter } from "./series-counter.js";
import { SeriesHistogram } from "./series-histogram.js";

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const ROUTES = ["/", "/eth_call", "/wallet"];

/** A scrape as sorted lines of name, labels and value: the order of series is not part of the format. */
async function exposition(registry: Registry): Promise<string[]> {
  return parsePrometheus(await registry.metrics())
    .flatMap((family) => {
      const metrics = family.metrics as {
        labels?: Record<string, string>;
        value?: string;
        buckets?: Record<string, string>;
        count?: string;
        sum?: string;
      }[];
      return metrics.map((m) => JSON.stringify([family.name, family.type, m]));
    })
    .sort();
}

it("the series histogram exposes what prom-client's Histogram exposes for the same observations", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom(...ROUTES), fc.double({ min: 0, max: 10, noNaN: true })), {
        maxLength: 200,
      }),
      async (observations) => {
        const [ours, theirs] = [new Registry(), new Registry()];
        const config = { name: "t_duration_seconds", help: "latency", buckets: BUCKETS };
        const series = new SeriesHistogram({ ...config, registers: [ours] });
        const reference = new Histogram({ ...config, labelNames: ["route"], registers: [theirs] });
        for (const [route, seconds] of observations) {
          series.for({ route }).observe(seconds);
          reference.observe({ route }, seconds);
        }
        expect(await exposition(ours)).toEqual(await exposition(theirs));
      },
    ),
    { numRuns: 50 },
  );
});

it("the series counter hands prom-client every increment, once, across scrapes", async () => {
  const [ours, theirs] = [new Registry(), new Registry()];
  const config = { name: "t_requests_total", help: "requests", labelNames: ["route", "status"] };
  const counter = new SeriesCounter({ ...config, registers: [ours] });
  const reference = new Counter({ ...config, registers: [theirs] });
  const ok = counter.for({ route: "/", status: "200" });
  for (let round = 1; round <= 3; round++) {
    for (let i = 0; i < round * 7; i++) {
      ok.inc();
      reference.inc({ route: "/", status: "200" });
    }
    counter.for({ route: "/wallet", status: "400" }).inc();
    reference.inc({ route: "/wallet", status: "400" });
    // Each scrape adds only what was counted since the last one.
    expect(await exposition(ours)).toEqual(await exposition(theirs));
  }
  // The same label values give back the same series.
  expect(counter.for({ route: "/", status: "200" })).toBe(ok);
});

it("an unlabelled series counter shows 0 before its first increment, as prom-client's does", async () => {
  const registry = new Registry();
  const counter = new SeriesCounter({
    name: "t_fast_total",
    help: "fast",
    labelNames: [],
    registers: [registry],
  });
  expect(await registry.metrics()).toContain("t_fast_total 0");
  counter.for({}).inc();
  counter.for({}).inc();
  expect(await registry.metrics()).toContain("t_fast_total 2");
});

it("a reset registry starts the series histogram over", async () => {
  const registry = new Registry();
  const histogram = new SeriesHistogram({ name: "t_h", help: "h", buckets: [1], registers: [registry] });
  histogram.for({ route: "/" }).observe(0.5);
  registry.resetMetrics();
  histogram.for({ route: "/" }).observe(2);
  const text = await registry.metrics();
  expect(text).toContain('t_h_bucket{route="/",le="1"} 0');
  expect(text).toContain('t_h_bucket{route="/",le="+Inf"} 1');
  expect(text).toContain('t_h_count{route="/"} 1');
});
