import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { laneAmount, refill, reserveFrom } from "./lane-limits.js";

const HOUR = 3_600_000;

describe("a lane's token bucket", () => {
  it("lets what it holds through at once, and queues the rest until the refill pays for it", () => {
    expect(reserveFrom(100n, 40n, 100n, HOUR, 0)).toEqual({ after: 60n, releaseAt: 0 });
    // 150 through a 100-per-hour lane: 50 short, paid in half an hour.
    expect(reserveFrom(100n, 150n, 100n, HOUR, 0)).toEqual({ after: -50n, releaseAt: HOUR / 2 });
    // The next one queues behind it.
    expect(reserveFrom(-50n, 10n, 100n, HOUR, 0).releaseAt).toBe(HOUR * 0.6);
  });

  it("refills at capacity per period and never above capacity", () => {
    const limit = { capacity: "100", period_ms: HOUR, level: "-50", level_at: 0 };
    expect(refill(limit, HOUR / 2)).toBe(0n);
    expect(refill(limit, HOUR)).toBe(50n);
    expect(refill(limit, 10 * HOUR)).toBe(100n);
  });

  it("counts an ERC20's amount, one per ERC721 token, and leaves messages unlimited", () => {
    expect(laneAmount({ kind: "ERC20", amount: "250" })).toBe(250n);
    expect(laneAmount({ kind: "ERC721", amount: null })).toBe(1n);
    expect(laneAmount({ kind: "MESSAGE", amount: null })).toBeUndefined();
  });

  it("what is released by any time t is at most capacity + capacity * t / period, in order (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.integer({ min: 1_000, max: 10 * HOUR }),
        fc.array(
          fc.record({ gap: fc.integer({ min: 0, max: HOUR }), share: fc.integer({ min: 1, max: 5_000 }) }),
          {
            maxLength: 30,
          },
        ),
        (capacity, period, shares) => {
          // Amounts from a thousandth of the capacity to five times it.
          const transports = shares.map((s) => ({
            gap: s.gap,
            amount: (capacity * BigInt(s.share)) / 1000n + 1n,
          }));
          let limit = {
            capacity: capacity.toString(),
            period_ms: period,
            level: capacity.toString(),
            level_at: 0,
          };
          let now = 0;
          const released: { at: number; amount: bigint }[] = [];
          for (const t of transports) {
            now += t.gap;
            const { after, releaseAt } = reserveFrom(refill(limit, now), t.amount, capacity, period, now);
            limit = { ...limit, level: after.toString(), level_at: now };
            released.push({ at: releaseAt, amount: t.amount });
          }
          for (let i = 1; i < released.length; i++)
            expect(released[i]!.at).toBeGreaterThanOrEqual(released[i - 1]!.at);
          for (const { at } of released) {
            const upTo = released.filter((r) => r.at <= at).reduce((sum, r) => sum + r.amount, 0n);
            // +2: release times are whole milliseconds and the refill whole base units, each rounded once.
            expect(upTo).toBeLessThanOrEqual(capacity + (capacity * BigInt(at)) / BigInt(period) + 2n);
          }
        },
      ),
    );
  });
});
