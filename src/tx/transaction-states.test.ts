import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openStore, type Store } from "../store/database.js";
import { rowId } from "../store/row-id.js";
import type { TransactionsTable } from "../store/schema.js";
import { describeEachStore, suiteStore, type TempStore, tempStore } from "../test-support/stores.js";
import { transactionRow } from "../test-support/transaction-row.js";
import { TransactionStates } from "./transaction-states.js";

/** A queued row as the pipeline stores it (the bytes are not a real transaction: nothing is sent). */
function queued(nonce: number, now: number): TransactionsTable {
  return transactionRow({
    id: rowId(now),
    nonce,
    raw: `0x02${nonce.toString(16).padStart(4, "0")}`,
    tx_hash: `0x${nonce.toString(16).padStart(64, "0")}`,
    state: "queued",
    created_at: now,
    updated_at: now,
  });
}

describeEachStore("TransactionStates.move", (target) => {
  const opened = suiteStore(target);

  it("one move of many rows in a turn moves each row still in the state it was read in, and no other", async () => {
    let clock = 1_000;
    const states = new TransactionStates(opened.store, () => clock);
    const rows = Array.from({ length: 40 }, (_, i) => queued(i, clock));
    await opened.store.db.transaction().execute(async (trx) => {
      for (const row of rows) await states.create(trx, row);
    });
    // Two rows move first, on their own: the burst's move below must leave them as they are.
    clock = 2_000;
    await states.move(rows[3]!, { set: { state: "sent", broadcasts: 1 }, stamp: ["sent_at"] });
    await states.move(rows[17]!, { set: { state: "dropped", error: "gone" } });
    clock = 3_000;
    // The same move asked for every row in one turn: one statement (the rows' ids one parameter).
    await Promise.all(
      rows.map((row) => states.move(row, { set: { state: "sent", broadcasts: 1 }, stamp: ["sent_at"] })),
    );
    const stored = await opened.store.db
      .selectFrom("transactions")
      .select(["nonce", "state", "sent_at", "updated_at", "error", "broadcasts"])
      .where("chain_id", "=", 31_337)
      .orderBy("nonce")
      .execute();
    expect(stored).toHaveLength(40);
    for (const row of stored) {
      if (row.nonce === 3) expect(row).toMatchObject({ state: "sent", sent_at: 2_000, updated_at: 2_000 });
      else if (row.nonce === 17)
        expect(row).toMatchObject({ state: "dropped", error: "gone", sent_at: null, updated_at: 2_000 });
      else expect(row).toMatchObject({ state: "sent", sent_at: 3_000, updated_at: 3_000, broadcasts: 1 });
    }
    // A move of another shape (fields only, then a second state at once) on rows now sent.
    clock = 4_000;
    const sent = rows.filter((_, i) => i !== 17).map((row) => ({ ...row, state: "sent" as const }));
    await Promise.all(
      sent.map((row) =>
        states.move(
          row,
          { set: { state: "mined", block_number: 9, block_hash: "0xb9", error: null } },
          false,
        ),
      ),
    );
    const mined = await opened.store.db
      .selectFrom("transactions")
      .select(["state", "block_number", "block_hash"])
      .where("chain_id", "=", 31_337)
      .where("state", "=", "mined")
      .execute();
    expect(mined).toHaveLength(39);
    expect(mined.every((r) => r.block_number === 9 && r.block_hash === "0xb9")).toBe(true);
  });
});

describe("a move's statement on SQLite", () => {
  let temp: TempStore | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await store?.close();
    await temp?.drop();
  });

  it("states its state as a literal: a bound one is planned against the partial index on drops, so compiled again every run", async () => {
    // Every statement the store prepares, from its opening on (the statement cache binds `prepare` then).
    const prepared: string[] = [];
    const prepare = SQLite.prototype.prepare;
    vi.spyOn(SQLite.prototype, "prepare").mockImplementation(function (this: SQLite.Database, source) {
      prepared.push(source);
      return prepare.call(this, source);
    });
    temp = await tempStore("sqlite");
    store = await openStore(temp.location);
    const states = new TransactionStates(store, () => 5_000);
    const rows = [queued(1, 5_000), queued(2, 5_000)];
    await store.db.transaction().execute(async (trx) => {
      for (const row of rows) await states.create(trx, row);
    });
    await states.move(rows[0]!, { set: { state: "sent", broadcasts: 1 }, stamp: ["sent_at"] });
    await states.move(rows[1]!, { set: { state: "dropped", error: "gone" } });
    const sentRow = { ...rows[0]!, state: "sent" as const };
    await states.move(sentRow, { set: { state: "mined", block_number: 3, block_hash: "0xb3" } });
    const moves = prepared.filter((source) => source.startsWith('update "transactions"'));
    expect(moves).toHaveLength(3);
    for (const source of moves) expect(source).toMatch(/"state" = '(queued|sent)' returning "id"$/);
    const stored = await store.db
      .selectFrom("transactions")
      .select(["nonce", "state"])
      .orderBy("nonce")
      .execute();
    expect(stored).toEqual([
      { nonce: 1, state: "mined" },
      { nonce: 2, state: "dropped" },
    ]);
  });
});
