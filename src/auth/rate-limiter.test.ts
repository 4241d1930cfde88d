import { expect, it } from "vitest";
import { MAX_BUCKETS, RateLimiter } from "./rate-limiter.js";

const limits = {
  read: { count: 2, perMs: 60_000 },
  sign: { count: 0, perMs: 1000 },
  wallet_create: { count: 0, perMs: 1000 },
  trace: { count: 0, perMs: 1000 },
};

it("takes tokens until none is left, and says when the next one comes", () => {
  const limiter = new RateLimiter(limits, () => 0);
  expect(limiter.take("a", "read").ok).toBe(true);
  expect(limiter.take("a", "read").ok).toBe(true);
  expect(limiter.take("a", "read")).toEqual({ ok: false, retryAfterSeconds: 30 });
  // Another caller has its own bucket; a group without a limit always passes.
  expect(limiter.take("b", "read").ok).toBe(true);
  expect(limiter.take("a", "sign").ok).toBe(true);
});

it("past its bound forgets the caller seen least recently, never one seen since", () => {
  const limiter = new RateLimiter(limits, () => 0);
  // Two callers spend their tokens first; "recent" is seen again after the flood began.
  for (const caller of ["old", "recent"]) {
    limiter.take(caller, "read");
    limiter.take(caller, "read");
  }
  for (let i = 0; i < MAX_BUCKETS - 2; i++) limiter.take(`flood-${i}`, "read");
  expect(limiter.take("recent", "read").ok).toBe(false);
  // The next new caller makes room: the least recently seen is "old", forgotten (a fresh bucket).
  limiter.take("one-more", "read");
  expect(limiter.take("recent", "read").ok).toBe(false);
  expect(limiter.take("old", "read").ok).toBe(true);
  // Far past the bound, a caller that keeps coming keeps its empty bucket.
  for (let i = 0; i < 2 * MAX_BUCKETS; i++) {
    limiter.take(`wave-${i}`, "read");
    if (i % 1000 === 0) expect(limiter.take("recent", "read").ok).toBe(false);
  }
});
