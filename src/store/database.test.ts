import { sql } from "kysely";
import { expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { describeEachStore, tempStore } from "../test-support/stores.js";
import { openStore } from "./database.js";

describeEachStore("the store", (target) => {
  it("runs the migrations once, reopens cleanly, and round-trips bigint columns as numbers", async () => {
    const temp = await tempStore(target);
    try {
      const first = await openStore(temp.location);
      await first.db
        .insertInto("filters")
        .values({
          id: "0xabc",
          chain_id: 1001,
          kind: "block",
          criteria: null,
          cursor_block: 2 ** 40,
          cursor_hash: null,
          node_filter_id: null,
          created_at: Date.now(),
          last_poll_at: Date.now(),
        })
        .execute();
      await first.close();
      const again = await openStore(temp.location);
      const row = await again.db.selectFrom("filters").selectAll().executeTakeFirstOrThrow();
      expect(row.cursor_block).toBe(2 ** 40);
      expect(typeof row.chain_id).toBe("number");
      await again.close();
    } finally {
      await temp.drop();
    }
  });
});

it("SQLite keeps statement journals in memory, not in temporary files (decision 181)", async () => {
  const temp = await tempStore("sqlite");
  try {
    const store = await openStore(temp.location);
    try {
      const { rows } = await sql<{ temp_store: number }>`pragma temp_store`.execute(store.db);
      // 2 = MEMORY (0, the default, lets SQLite spill a journal past 64 KiB to a file).
      expect(rows[0]?.temp_store).toBe(2);
    } finally {
      await store.close();
    }
  } finally {
    await temp.drop();
  }
});

it("an unreachable PostgreSQL is a clear, retryable start-up error", async () => {
  const error = await openStore({ kind: "postgres", url: "postgres://nobody@127.0.0.1:1/none" }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChaingateError);
  expect((error as ChaingateError).code).toBe("STORE_UNAVAILABLE");
  expect((error as ChaingateError).retryable).toBe(true);
});
