import fc from "fast-check";
import { expect, it } from "vitest";
import { CallsInFlight, type InFlight } from "./calls-in-flight.js";

// Keys as the response cache makes them, some longer than the characters hashed: keys that differ
// only where the hash does not read must still be told apart by their full comparison.
const longTail = "x".repeat(400);
const key = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc
    .integer({ min: 0, max: 30 })
    .map((n) => `1001|eth_getBalance|["0x${n.toString(16).padStart(40, "0")}","latest"]`),
  fc
    .tuple(fc.integer({ min: 0, max: 399 }), fc.constantFrom("a", "b", "c"))
    .map(([at, c]) => `1001|eth_call|${longTail.slice(0, at)}${c}${longTail.slice(at + 1)}`),
);

it("answers as a Map of the calls in flight would, whatever the keys share", () => {
  const op = fc.record({ kind: fc.constantFrom("start", "settle", "look"), key });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
      const calls = new CallsInFlight<number>();
      const reference = new Map<string, number>();
      const added = new Map<string, InFlight<number>>();
      ops.forEach(({ kind, key }, n) => {
        const bucket = calls.bucketOf(key);
        if (kind === "start" && calls.get(bucket, key) === undefined) {
          added.set(key, calls.add(bucket, key, n));
          reference.set(key, n);
        } else if (kind === "settle") {
          const call = added.get(key);
          if (call !== undefined) calls.remove(call);
          added.delete(key);
          reference.delete(key);
        }
        expect(calls.get(bucket, key)).toBe(reference.get(key));
        expect(calls.size).toBe(reference.size);
      });
      for (const [k, v] of reference) expect(calls.get(calls.bucketOf(k), k)).toBe(v);
    }),
  );
});

it("holds more calls than it has buckets, each found by its key and removed once", () => {
  const calls = new CallsInFlight<number>();
  const keys = Array.from({ length: 20_000 }, (_, n) => `1|eth_getBalance|["0x${n.toString(16)}","latest"]`);
  const handles = keys.map((k, n) => calls.add(calls.bucketOf(k), k, n));
  expect(calls.size).toBe(20_000);
  for (const [n, k] of keys.entries()) expect(calls.get(calls.bucketOf(k), k)).toBe(n);
  for (const [n, h] of handles.entries()) if (n % 2 === 0) calls.remove(h);
  for (const [n, k] of keys.entries())
    expect(calls.get(calls.bucketOf(k), k)).toBe(n % 2 === 0 ? undefined : n);
  calls.remove(handles[0]!);
  expect(calls.size).toBe(10_000);
});
