import { expect, it } from "vitest";
import { BoundedRead } from "./bounded-read.js";

it("reads again only once the last read's cost is at most its share of the time since it began", async () => {
  let clock = 0;
  let reads = 0;
  // Each read takes 10 ms of the fake clock; at a 2% share it is good for 500 ms from its start.
  const counts = new BoundedRead(
    async () => {
      reads++;
      clock += 10;
      return reads;
    },
    0.02,
    2,
    () => clock,
  );
  expect(await counts.get()).toBe(1);
  clock = 499;
  expect(await counts.get()).toBe(1);
  clock = 500;
  expect(await counts.get()).toBe(2);
  expect(reads).toBe(2);
  // Concurrent callers share the read under way.
  clock = 10_000;
  const together = await Promise.all([counts.get(), counts.get(), counts.get()]);
  expect(together).toEqual([3, 3, 3]);
  expect(reads).toBe(3);
});

it("a read cheaper than its threshold is made again at every call", async () => {
  let clock = 0;
  let reads = 0;
  const counts = new BoundedRead(
    async () => {
      clock += 1.5;
      return ++reads;
    },
    0.02,
    2,
    () => clock,
  );
  expect([await counts.get(), await counts.get(), await counts.get()]).toEqual([1, 2, 3]);
});

it("a failed read is reported to its callers and tried again by the next one", async () => {
  let fail = true;
  const counts = new BoundedRead(async () => {
    if (fail) throw new Error("store unavailable");
    return 7;
  });
  await expect(counts.get()).rejects.toThrow("store unavailable");
  fail = false;
  expect(await counts.get()).toBe(7);
});
