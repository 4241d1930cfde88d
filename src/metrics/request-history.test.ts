import fc from "fast-check";
import { expect, it } from "vitest";
import { RequestHistory } from "./request-history.js";

it("counts requests and 4xx/5xx answers by ten seconds over the last ten minutes, oldest first", () => {
  let now = 1_000_000_000_000;
  const history = new RequestHistory(() => now);
  history.record(200);
  history.record(404);
  now += 10_000;
  history.record(500);
  const { bucketSeconds, buckets } = history.recent();
  expect(bucketSeconds).toBe(10);
  expect(buckets).toHaveLength(60);
  expect(buckets.at(-2)).toEqual({ at: 1_000_000_000_000, requests: 2, errors: 1 });
  expect(buckets.at(-1)).toEqual({ at: 1_000_000_010_000, requests: 1, errors: 1 });
  // Ten minutes later the old counts are gone, not added to the slot's new bucket.
  now += 600_000;
  history.record(200);
  expect(history.recent().buckets.reduce((sum, b) => sum + b.requests, 0)).toBe(1);
});

it("holds exactly what a list of the last ten minutes' requests holds, whatever the times", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          step: fc.integer({ min: 0, max: 120_000 }),
          status: fc.constantFrom(200, 304, 400, 503),
        }),
      ),
      (events) => {
        let now = 1_700_000_000_000;
        const history = new RequestHistory(() => now);
        const seen: { at: number; status: number }[] = [];
        for (const { step, status } of events) {
          now += step;
          history.record(status);
          seen.push({ at: now, status });
        }
        const { buckets } = history.recent();
        const from = buckets[0]!.at;
        const kept = seen.filter((e) => e.at >= from);
        expect(buckets.reduce((s, b) => s + b.requests, 0)).toBe(kept.length);
        expect(buckets.reduce((s, b) => s + b.errors, 0)).toBe(kept.filter((e) => e.status >= 400).length);
      },
    ),
  );
});
