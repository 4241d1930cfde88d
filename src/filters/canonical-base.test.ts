import fc from "fast-check";
import { expect, it } from "vitest";
import { canonicalBase } from "./canonical-base.js";

/** Remembered blocks n..n+k and a chain that kept the first `kept` of them and replaced the rest. */
const reorg = fc
  .record({ first: fc.nat(1_000), length: fc.integer({ min: 1, max: 20 }), kept: fc.nat(20) })
  .map(({ first, length, kept }) => {
    const remembered = Array.from({ length }, (_, i) => ({ n: first + i, h: `0xold${first + i}` }));
    const keep = Math.min(kept, length);
    const chain = new Map(remembered.map((b, i) => [b.n, i < keep ? b.h : `0xnew${b.n}`]));
    return { remembered, keep, chain };
  });

it("resumes after the newest block the chain kept; every newer remembered block was replaced", async () => {
  await fc.assert(
    fc.asyncProperty(reorg, fc.boolean(), async ({ remembered, keep, chain }, shuffled) => {
      const asked: number[] = [];
      const hashAt = async (n: number) => {
        asked.push(n);
        return chain.get(n) ?? null;
      };
      const given = shuffled ? [...remembered].reverse() : remembered;
      const { base, replaced } = await canonicalBase(given, hashAt, -99);
      const first = remembered[0]!.n;
      expect(base).toBe(keep === 0 ? first - 1 : first + keep - 1);
      expect(replaced.map((b) => b.n)).toEqual(remembered.slice(keep).map((b) => b.n));
      // Only what lies above the base is asked about, plus the base itself.
      expect(asked.every((n) => n >= base)).toBe(true);
    }),
  );
});

it("with nothing remembered, the fallback is the base and nothing is replaced", async () => {
  expect(await canonicalBase([], async () => "0x", 41)).toEqual({ base: 41, replaced: [] });
});

it("a node that does not have a block (null) counts as a replacement", async () => {
  const remembered = [
    { n: 5, h: "0xa" },
    { n: 6, h: "0xb" },
  ];
  const { base, replaced } = await canonicalBase(remembered, async (n) => (n === 5 ? "0xa" : null), -1);
  expect(base).toBe(5);
  expect(replaced).toEqual([{ n: 6, h: "0xb" }]);
});
