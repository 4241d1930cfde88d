import { expect, it } from "vitest";
import { AnswerBudget, LARGE_ANSWER_BYTES } from "./answer-budget.js";

const MIB = 1_048_576;

it("a request holds what it answers until released; a key and the process are each bounded", () => {
  const budget = new AnswerBudget(10 * MIB, 15 * MIB);
  const a = budget.open("alice", 8 * MIB, "the batch answer");
  expect(a.take(5 * MIB)).toBeUndefined();
  // Past the request's own ceiling: the batch cap.
  expect(a.take(4 * MIB)?.code).toBe("RESPONSE_TOO_LARGE");
  const b = budget.open("alice", 8 * MIB, "the batch answer");
  expect(b.take(4 * MIB)).toBeUndefined();
  // alice holds 9 MiB of her 10: a second request of hers may not take 2 more, nor start node work once full.
  expect(b.take(2 * MIB)?.code).toBe("ANSWERS_IN_FLIGHT");
  expect(b.take(1 * MIB)).toBeUndefined();
  expect(() => b.check()).toThrow(/this key's requests already hold 10 MiB/);
  // Another key is not held back by alice's, until the process is full.
  const c = budget.open("bob", 8 * MIB, "the answer");
  expect(c.take(5 * MIB)).toBeUndefined();
  expect(c.take(1 * MIB)?.code).toBe("ANSWERS_IN_FLIGHT");
  expect(budget.heldBy()).toBe(15 * MIB);
  a.release();
  a.release();
  expect(budget.heldBy("alice")).toBe(5 * MIB);
  expect(budget.heldBy()).toBe(10 * MIB);
  b.release();
  c.release();
  expect(budget.heldBy()).toBe(0);
  expect(() => budget.open("alice", 8 * MIB, "the answer").check()).not.toThrow();
});

it("large answers a key is given per second are bounded; small ones are not counted", () => {
  let now = 0;
  const budget = new AnswerBudget(64 * MIB, 128 * MIB, 4 * MIB, () => now);
  const first = budget.open("mallory", 64 * MIB, "the batch answer");
  // One answer larger than a second's worth is still given; then the key waits to pay for it.
  expect(first.take(10 * MIB)).toBeUndefined();
  first.release();
  const next = budget.open("mallory", 64 * MIB, "the batch answer");
  let refusal: unknown;
  try {
    next.check();
  } catch (error) {
    refusal = error;
  }
  expect(refusal).toMatchObject({
    code: "ANSWERS_IN_FLIGHT",
    retryable: true,
    data: { retry_after_seconds: 2 },
  });
  // Others are not touched, and small answers cost nothing.
  expect(() => budget.open("victim", 64 * MIB, "the answer").check()).not.toThrow();
  for (let i = 0; i < 10_000; i++) {
    const small = budget.open("reader", MIB, "x");
    expect(small.take(LARGE_ANSWER_BYTES - 1)).toBeUndefined();
    small.release();
  }
  expect(budget.open("reader", MIB, "x").take(LARGE_ANSWER_BYTES - 1)).toBeUndefined();
  expect(() => budget.open("reader", MIB, "x").check()).not.toThrow();
  now += 1_600;
  expect(() => next.check()).not.toThrow();
});
