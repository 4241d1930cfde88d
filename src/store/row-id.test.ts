import fc from "fast-check";
import { expect, it } from "vitest";
import { rowId } from "./row-id.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it("is a version 7 UUID whose first 48 bits are the time, sorting in time order (property)", () => {
  // Any millisecond from 1970 to the end of the 48-bit range (year 10889).
  const ms = fc.integer({ min: 0, max: 2 ** 48 - 1 });
  fc.assert(
    fc.property(ms, ms, (a, b) => {
      const [x, y] = [rowId(a), rowId(b)];
      expect(x).toMatch(V7);
      expect(Number.parseInt(x.slice(0, 8) + x.slice(9, 13), 16)).toBe(a);
      // Text order is time order whenever the milliseconds differ.
      if (a !== b) expect(x < y).toBe(a < b);
    }),
  );
});

it("keeps 74 random bits: ids made in the same millisecond differ", () => {
  const now = Date.now();
  const ids = new Set(Array.from({ length: 10_000 }, () => rowId(now)));
  expect(ids.size).toBe(10_000);
  for (const id of ids) expect(id.slice(0, 13)).toBe(rowId(now).slice(0, 13));
});
