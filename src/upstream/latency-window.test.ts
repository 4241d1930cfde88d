import fc from "fast-check";
import { expect, it } from "vitest";
import { LatencyWindow } from "./latency-window.js";

/** What the window must answer: the percentile of the last `size` samples, sorted afresh. */
function expected(samples: readonly number[], size: number, share: number, least: number) {
  const last = samples.slice(-size);
  if (last.length < least) return undefined;
  return [...last].sort((a, b) => a - b)[Math.floor(last.length * share)];
}

it("answers the percentile of the last samples as a fresh sort of them does, after any sequence (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 70 }),
      // Few distinct values too, so equal samples leave and enter the window.
      fc.array(
        fc.oneof(fc.double({ min: 0, max: 1e4, noNaN: true }).map(Math.abs), fc.integer({ min: 0, max: 3 })),
        {
          maxLength: 300,
        },
      ),
      (size, samples) => {
        const window = new LatencyWindow(size);
        samples.forEach((ms, i) => {
          window.add(ms);
          const seen = samples.slice(0, i + 1);
          expect(window.length).toBe(Math.min(size, seen.length));
          for (const share of [0, 0.5, 0.9, 0.99])
            expect(window.percentile(share, 1)).toBe(expected(seen, size, share, 1));
        });
      },
    ),
  );
});

it("says nothing until it holds the least number of samples asked", () => {
  const window = new LatencyWindow(64);
  for (let i = 1; i <= 7; i++) window.add(i);
  expect(window.percentile(0.9, 8)).toBeUndefined();
  window.add(8);
  expect(window.percentile(0.9, 8)).toBe(8);
  // 100 samples through a window of 64: only 37..100 remain, p90 is the 58th of them.
  for (let i = 9; i <= 100; i++) window.add(i);
  expect(window.percentile(0.9, 8)).toBe(37 + Math.floor(64 * 0.9));
});
