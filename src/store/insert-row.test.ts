import fc from "fast-check";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import {
  combinedStatementsKept,
  insertRow,
  insertRows,
  insertRowsTogether,
  MAX_COMBINED,
} from "./insert-row.js";

describeEachStore("insertRow", (target) => {
  const opened = suiteStore(target);

  const ledger = (chain: number) =>
    opened.store.db
      .selectFrom("nonce_ledger")
      .selectAll()
      .where("chain_id", "=", chain)
      .orderBy("address")
      .execute();

  it("rows of one shape, inserted again and again (in and out of transactions), are each stored with their own values", async () => {
    for (let i = 0; i < 5; i++)
      await insertRow(opened.store.db, "nonce_ledger", { chain_id: 7, address: `a${i}`, next_nonce: i });
    await opened.store.db.transaction().execute(async (trx) => {
      await insertRow(trx, "nonce_ledger", { chain_id: 7, address: "b", next_nonce: 41 });
    });
    // Another column order is another shape, kept beside the first: each reused with its own order.
    await insertRow(opened.store.db, "nonce_ledger", { next_nonce: 42, address: "c", chain_id: 7 });
    await insertRow(opened.store.db, "nonce_ledger", { next_nonce: 43, address: "d", chain_id: 7 });
    await insertRow(opened.store.db, "nonce_ledger", { chain_id: 7, address: "e", next_nonce: 44 });
    expect(await ledger(7)).toEqual([
      ...[0, 1, 2, 3, 4].map((i) => ({ chain_id: 7, address: `a${i}`, next_nonce: i })),
      { chain_id: 7, address: "b", next_nonce: 41 },
      { chain_id: 7, address: "c", next_nonce: 42 },
      { chain_id: 7, address: "d", next_nonce: 43 },
      { chain_id: 7, address: "e", next_nonce: 44 },
    ]);
  });

  it("a value that is an expression is compiled, never passed as a parameter, before or after the shape is kept", async () => {
    await insertRow(opened.store.db, "nonce_ledger", {
      chain_id: 8,
      address: "x",
      next_nonce: sql<number>`1 + 1` as never,
    });
    await insertRow(opened.store.db, "nonce_ledger", { chain_id: 8, address: "y", next_nonce: 3 });
    await insertRow(opened.store.db, "nonce_ledger", {
      chain_id: 8,
      address: "z",
      next_nonce: sql<number>`2 + 2` as never,
    });
    expect((await ledger(8)).map((r) => r.next_nonce)).toEqual([2, 3, 4]);
  });

  it("a refused row (a duplicate key) fails as Kysely's insert would, and leaves nothing", async () => {
    await insertRow(opened.store.db, "nonce_ledger", { chain_id: 9, address: "d", next_nonce: 1 });
    await expect(
      insertRow(opened.store.db, "nonce_ledger", { chain_id: 9, address: "d", next_nonce: 2 }),
    ).rejects.toThrow();
    expect(await ledger(9)).toEqual([{ chain_id: 9, address: "d", next_nonce: 1 }]);
  });

  it("several rows of one shape, at several counts and again, are each stored with their own values; mixed shapes and expressions go through Kysely", async () => {
    const rows = (chain: number, from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({
        chain_id: chain,
        address: `r${from + i}`,
        next_nonce: from + i,
      }));
    for (const [from, count] of [
      [0, 3],
      [3, 2],
      [5, 3],
      [8, 1],
      [9, 2],
    ] as const)
      await opened.store.db
        .transaction()
        .execute((trx) => insertRows(trx, "nonce_ledger", rows(10, from, count)));
    expect((await ledger(10)).map((r) => [r.address, r.next_nonce])).toEqual(
      Array.from({ length: 11 }, (_, i) => [`r${i}`, i]).sort((a, b) =>
        String(a[0]).localeCompare(String(b[0])),
      ),
    );
    // One row without next_nonce's value as a parameter, one in another column order.
    await insertRows(opened.store.db, "nonce_ledger", [
      { chain_id: 11, address: "m", next_nonce: sql<number>`5 + 5` as never },
      { next_nonce: 12, address: "n", chain_id: 11 },
    ]);
    await insertRows(opened.store.db, "nonce_ledger", rows(11, 20, 2));
    expect((await ledger(11)).map((r) => [r.address, r.next_nonce])).toEqual([
      ["m", 10],
      ["n", 12],
      ["r20", 20],
      ["r21", 21],
    ]);
  });

  it("rows of two tables written together (on PostgreSQL by one statement): every row stored with its own values, at any counts", async () => {
    let chain = 100;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        async (ledgerRows, instanceRows) => {
          chain++;
          const ledgerPart = Array.from({ length: ledgerRows }, (_, i) => ({
            chain_id: chain,
            address: `t${i}`,
            next_nonce: chain * 10 + i,
          }));
          const instancePart = Array.from({ length: instanceRows }, (_, i) => ({
            id: `i${chain}-${i}`,
            started_at: chain,
            seen_at: chain * 100 + i,
          }));
          await opened.store.db.transaction().execute((trx) =>
            insertRowsTogether(trx, [
              { table: "nonce_ledger", rows: ledgerPart },
              { table: "instances", rows: instancePart },
            ]),
          );
          expect(await ledger(chain)).toEqual(ledgerPart);
          expect(
            await opened.store.db
              .selectFrom("instances")
              .selectAll()
              .where("started_at", "=", chain)
              .orderBy("seen_at")
              .execute(),
          ).toEqual(instancePart);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a read that rides with the inserts answers its rows, with any number of inserts before it, and the rows are stored", async () => {
    await insertRow(opened.store.db, "instances", { id: "ride-along", started_at: 30, seen_at: 31 });
    const read = () =>
      opened.store.db
        .selectFrom("instances")
        .select(["id", "seen_at"])
        // A parameter of its own: numbered after the inserts' on PostgreSQL.
        .where("started_at", "=", 30)
        .compile();
    for (const count of [0, 1, 3]) {
      const rows = Array.from({ length: count }, (_, i) => ({
        chain_id: 30 + count,
        address: `r${i}`,
        next_nonce: i,
      }));
      const answered = await opened.store.db
        .transaction()
        .execute((trx) => insertRowsTogether(trx, [{ table: "nonce_ledger", rows }], read()));
      expect(answered).toEqual([{ id: "ride-along", seen_at: 31 }]);
      expect(await ledger(30 + count)).toEqual(rows);
    }
  });

  it("past its bound of combined statements kept, rows of new shapes are still written whole (PostgreSQL combines them)", async () => {
    const before = combinedStatementsKept();
    // 30 x 20 row counts: 600 combinations of two tables' inserts, more than the bound holds.
    for (let ledgerRows = 1; ledgerRows <= 30; ledgerRows++)
      for (let instanceRows = 1; instanceRows <= 20; instanceRows++) {
        const chain = 100_000 + ledgerRows * 100 + instanceRows;
        await opened.store.db.transaction().execute((trx) =>
          insertRowsTogether(trx, [
            {
              table: "nonce_ledger",
              rows: Array.from({ length: ledgerRows }, (_, i) => ({
                chain_id: chain,
                address: `b${i}`,
                next_nonce: i,
              })),
            },
            {
              table: "instances",
              rows: Array.from({ length: instanceRows }, (_, i) => ({
                id: `bound-${chain}-${i}`,
                started_at: chain,
                seen_at: i,
              })),
            },
          ]),
        );
        if (instanceRows % 7 === 0 || ledgerRows === 30) {
          expect(await ledger(chain)).toHaveLength(ledgerRows);
          const instances = await opened.store.db
            .selectFrom("instances")
            .select("id")
            .where("started_at", "=", chain)
            .execute();
          expect(instances).toHaveLength(instanceRows);
        }
      }
    if (target === "postgres") expect(combinedStatementsKept()).toBe(MAX_COMBINED);
    else expect(combinedStatementsKept()).toBe(before);
  });

  it("rows written together where one is refused (a duplicate key): nothing of either table is kept", async () => {
    await insertRow(opened.store.db, "instances", { id: "taken", started_at: 1, seen_at: 1 });
    await expect(
      opened.store.db.transaction().execute((trx) =>
        insertRowsTogether(trx, [
          { table: "nonce_ledger", rows: [{ chain_id: 12, address: "kept?", next_nonce: 1 }] },
          { table: "instances", rows: [{ id: "taken", started_at: 2, seen_at: 2 }] },
        ]),
      ),
    ).rejects.toThrow();
    expect(await ledger(12)).toEqual([]);
  });
});
