import { sql } from "kysely";
import { beforeAll, expect, it } from "vitest";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import { PreparedQuery } from "./prepared-query.js";

const BUMP = new PreparedQuery((db, slot) =>
  db
    .updateTable("nonce_ledger")
    .set((eb) => ({ next_nonce: eb("next_nonce", "+", 5) }))
    .where("chain_id", "=", slot<number>(0))
    .where("address", "=", slot<string>(1))
    .returning("next_nonce"),
);
const READ = new PreparedQuery((db, slot) =>
  db
    .selectFrom("nonce_ledger")
    .select(["address", "next_nonce"])
    .where("chain_id", "=", slot<number>(0))
    .where("next_nonce", ">=", slot<number>(1))
    .orderBy("address"),
);

describeEachStore("PreparedQuery", (target) => {
  const opened = suiteStore(target);

  beforeAll(async () => {
    await opened.store.db
      .insertInto("nonce_ledger")
      .values([
        { chain_id: 1, address: "a", next_nonce: 0 },
        { chain_id: 1, address: "b", next_nonce: 10 },
        { chain_id: 2, address: "a", next_nonce: 100 },
      ])
      .execute();
  });

  it("runs with each call's arguments and the builder's constants, in and out of transactions, as Kysely's own query would", async () => {
    expect((await BUMP.execute(opened.store.db, [1, "a"])).rows).toEqual([{ next_nonce: 5 }]);
    await opened.store.db.transaction().execute(async (trx) => {
      expect((await BUMP.execute(trx, [1, "b"])).rows).toEqual([{ next_nonce: 15 }]);
    });
    expect((await BUMP.execute(opened.store.db, [2, "a"])).rows).toEqual([{ next_nonce: 105 }]);
    // No row: nothing changed, nothing returned.
    expect((await BUMP.execute(opened.store.db, [3, "a"])).rows).toEqual([]);
    expect((await READ.execute(opened.store.db, [1, 6])).rows).toEqual([{ address: "b", next_nonce: 15 }]);
    expect((await READ.execute(opened.store.db, [1, 0])).rows).toEqual(
      await opened.store.db
        .selectFrom("nonce_ledger")
        .select(["address", "next_nonce"])
        .where("chain_id", "=", 1)
        .where("next_nonce", ">=", 0)
        .orderBy("address")
        .execute(),
    );
  });

  it("a builder that turns an argument into SQL text instead of a parameter is refused at its first run", async () => {
    const wrong = new PreparedQuery((db, slot) =>
      db
        .selectFrom("nonce_ledger")
        .selectAll()
        .where("chain_id", "=", slot<number>(0))
        .where(sql.raw<boolean>(`address = '${String(slot<string>(1))}'`)),
    );
    await expect(wrong.execute(opened.store.db, [1, "a"])).rejects.toThrow(/2 arguments, 1 slots/);
  });
});
