import fc from "fast-check";
import { expect, it } from "vitest";
import { MapHand } from "./map-hand.js";

it("gives the oldest entry while each one given is dropped or moved to the back, as keys().next() would", () => {
  // Operations on a bounded map: touch (move to the back), add (evicting the oldest when full).
  const op = fc.oneof(
    fc.record({ kind: fc.constant("touch" as const), key: fc.integer({ min: 0, max: 40 }) }),
    fc.record({ kind: fc.constant("add" as const), key: fc.integer({ min: 0, max: 40 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 1, max: 12 }), (ops, max) => {
      const map = new Map<number, number>();
      const reference = new Map<number, number>();
      const hand = new MapHand(map);
      for (const { kind, key } of ops) {
        for (const m of [map, reference]) {
          if (m.has(key)) {
            m.delete(key);
            m.set(key, key);
          } else if (kind === "add") {
            if (m.size >= max) {
              const oldest = m === map ? hand.next()?.[0] : m.keys().next().value;
              if (oldest !== undefined) m.delete(oldest);
            }
            m.set(key, key);
          }
        }
        expect([...map.keys()]).toEqual([...reference.keys()]);
      }
    }),
  );
});

it("starts over after the newest, sees entries added since, and is empty-safe", () => {
  const map = new Map<string, number>();
  const hand = new MapHand(map);
  expect(hand.next()).toBeUndefined();
  map.set("a", 1).set("b", 2);
  expect(hand.next()).toEqual(["a", 1]);
  expect(hand.next()).toEqual(["b", 2]);
  // Past the newest the hand goes round (a finished Map iterator would stay finished) ...
  expect(hand.next()).toEqual(["a", 1]);
  // ... and meets what was added since at the back.
  map.set("c", 3);
  expect(hand.next()).toEqual(["b", 2]);
  expect(hand.next()).toEqual(["c", 3]);
  map.clear();
  hand.reset();
  expect(hand.next()).toBeUndefined();
});

it("peeks at the entry next will give without moving on, and forgets it on reset", () => {
  const map = new Map([
    ["a", 1],
    ["b", 2],
  ]);
  const hand = new MapHand(map);
  expect(hand.peek()).toEqual(["a", 1]);
  expect(hand.peek()).toEqual(["a", 1]);
  expect(hand.next()).toEqual(["a", 1]);
  expect(hand.peek()).toEqual(["b", 2]);
  expect(hand.next()).toEqual(["b", 2]);
  // Round again, as next would.
  expect(hand.peek()).toEqual(["a", 1]);
  map.clear();
  hand.reset();
  expect(hand.peek()).toBeUndefined();
  expect(hand.next()).toBeUndefined();
});
