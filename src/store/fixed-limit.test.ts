/** A fixed LIMIT: written into the SQL (never a parameter), refused unless a whole number of rows, and every constant LIMIT in the service written so. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { sourceFiles } from "../test-support/source-files.js";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import { fixedLimit } from "./fixed-limit.js";

describeEachStore("fixedLimit", (target) => {
  const opened = suiteStore(target);

  beforeAll(async () => {
    await opened.store.db
      .insertInto("nonce_ledger")
      .values([0, 1, 2, 3, 4].map((i) => ({ chain_id: 7, address: `a${i}`, next_nonce: i })))
      .execute();
  });

  it("limits the rows, with the count in the SQL and no parameter for it", async () => {
    const query = opened.store.db
      .selectFrom("nonce_ledger")
      .select("address")
      .where("chain_id", "=", 7)
      .orderBy("address")
      .limit(fixedLimit(2));
    const compiled = query.compile();
    expect(compiled.sql).toMatch(/ limit 2$/);
    expect(compiled.parameters).toEqual([7]);
    expect(await query.execute()).toEqual([{ address: "a0" }, { address: "a1" }]);
    expect(await query.clearLimit().limit(fixedLimit(0)).execute()).toEqual([]);
  });
});

describe("fixedLimit's count", () => {
  it("is written as the whole number given", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (rows) => {
        const sql = fixedLimit(rows).toOperationNode();
        expect(sql.kind).toBe("RawNode");
        expect(JSON.stringify(sql)).toContain(`"value":${rows}`);
      }),
    );
  });

  it("refuses anything but a whole number of rows (it goes into the SQL)", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ max: -1 }),
          fc.double().filter((d) => !Number.isSafeInteger(d)),
          fc.constant(2 ** 53),
        ),
        (rows) => {
          expect(() => fixedLimit(rows)).toThrow(RangeError);
        },
      ),
    );
    // A string that looks like a count is still not one.
    expect(() => fixedLimit("1; drop table transactions" as unknown as number)).toThrow(RangeError);
  });
});

/** Statements whose row count is the caller's (a page size): a parameter, compiled anew when it changes. */
const BOUND_LIMITS = new Set(["store/cursor-page.ts"]);

describe("the service's LIMITs", () => {
  it("are fixed wherever the row count is a constant (a bound LIMIT recompiles every run on SQLite)", () => {
    const src = join(import.meta.dirname, "..");
    const offenders: string[] = [];
    for (const path of sourceFiles(src)) {
      const relative = path.slice(src.length + 1);
      for (const call of readFileSync(path, "utf8").matchAll(/\.limit\(([^\n]*)/g))
        if (!call[1]!.startsWith("fixedLimit(") && !BOUND_LIMITS.has(relative))
          offenders.push(`${relative}: .limit(${call[1]}`);
    }
    expect(offenders).toEqual([]);
  });
});
