import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";
import { openStore, type Store } from "./database.js";
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
  let temp: TempStore;
  let store: Store;

  beforeAll(async () => {
    temp = await tempStore(target);
    store = await openStore(temp.location);
    await store.db
      .insertInto("nonce_ledger")
      .values([
        { chain_id: 1, address: "a", next_nonce: 0 },
        { chain_id: 1, address: "b", next_nonce: 10 },
        { chain_id: 2, address: "a", next_nonce: 100 },
      ])
      .execute();
  });
  afterAll(async () => {
    await store?.close();
    await temp?.drop();
  });

  it("runs with each call's arguments and the builder's constants, in and out of transactions, as Kysely's own query would", async () => {
    expect((await BUMP.execute(store.db, [1, "a"])).rows).toEqual([{ next_nonce: 5 }]);
    await store.db.transaction().execute(async (trx) => {
      expect((await BUMP.execute(trx, [1, "b"])).rows).toEqual([{ next_nonce: 15 }]);
    });
    expect((await BUMP.execute(store.db, [2, "a"])).rows).toEqual([{ next_nonce: 105 }]);
    // No row: nothing changed, nothing returned.
    expect((await BUMP.execute(store.db, [3, "a"])).rows).toEqual([]);
    expect((await READ.execute(store.db, [1, 6])).rows).toEqual([{ address: "b", next_nonce: 15 }]);
    expect((await READ.execute(store.db, [1, 0])).rows).toEqual(
      await store.db
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
    await expect(wrong.execute(store.db, [1, "a"])).rejects.toThrow(/2 arguments, 1 slots/);
  });
});
