import fc from "fast-check";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { ChaingateError } from "../errors/chaingate-error.js";
import { tempStore } from "../test-support/stores.js";
import { openStore } from "./database.js";
import { isConnectionFault, isStoreFault } from "./resilient-dialect.js";

const withCode = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

it("sorts database errors into connection faults, storage faults and statement errors", () => {
  expect(isConnectionFault(withCode("terminating connection due to administrator command", "57P01"))).toBe(
    true,
  );
  expect(isConnectionFault(withCode("Connection terminated unexpectedly"))).toBe(true);
  expect(isConnectionFault(withCode("read ECONNRESET", "ECONNRESET"))).toBe(true);
  expect(isStoreFault(withCode("could not extend file: No space left on device", "53100"))).toBe(true);
  expect(isStoreFault(withCode("cannot execute INSERT in a read-only transaction", "25006"))).toBe(true);
  expect(isStoreFault(withCode("database or disk is full", "SQLITE_FULL"))).toBe(true);
  expect(isStoreFault(withCode("attempt to write a readonly database", "SQLITE_READONLY"))).toBe(true);
  // A wrong statement is the statement's fault: never retried, never a 503.
  expect(isStoreFault(withCode('duplicate key value violates unique constraint "x"', "23505"))).toBe(false);
  expect(isStoreFault(withCode("UNIQUE constraint failed: wallets.id", "SQLITE_CONSTRAINT_PRIMARYKEY"))).toBe(
    false,
  );
  expect(isStoreFault(withCode('syntax error at or near "selec"', "42601"))).toBe(false);
  // Whatever a statement error says, a constraint or syntax code never reads as a fault.
  fc.assert(
    fc.property(
      fc.string(),
      fc.constantFrom("23505", "42601", "SQLITE_CONSTRAINT", "SQLITE_ERROR"),
      (msg, code) => {
        return !isStoreFault(withCode(msg.replace(/connection|terminat|closed|queryable|ended/gi, ""), code));
      },
    ),
  );
});

it("a full disk is a retryable 503 STORE_UNAVAILABLE, and writes work again once there is room", async () => {
  const temp = await tempStore("sqlite");
  const store = await openStore(temp.location);
  try {
    const insert = (id: string) =>
      store.db
        .insertInto("idempotency_keys")
        .values({
          route: "test",
          key: id,
          request_hash: "x".repeat(2000),
          status: "done",
          response_status: 200,
          response_body: "y".repeat(4000),
          created_at: Date.now(),
          lease_until: null,
        })
        .execute();
    const { rows } = await sql<{ page_count: number }>`PRAGMA page_count`.execute(store.db);
    // The file may not grow past its current size: what a full disk does to SQLite.
    await sql.raw(`PRAGMA max_page_count = ${rows[0]!.page_count}`).execute(store.db);
    let error: unknown;
    for (let i = 0; i < 100 && error === undefined; i++)
      await insert(`k${i}`).catch((e: unknown) => (error = e));
    expect(error).toBeInstanceOf(ChaingateError);
    expect(error).toMatchObject({ code: "STORE_UNAVAILABLE", status: 503, retryable: true });
    // Reads still work, and once the disk has room again so do writes.
    await store.db.selectFrom("idempotency_keys").select("key").execute();
    await sql.raw("PRAGMA max_page_count = 1073741823").execute(store.db);
    await insert("after");
    expect(
      await store.db.selectFrom("idempotency_keys").select("key").where("key", "=", "after").execute(),
    ).toHaveLength(1);
  } finally {
    await store.close();
    await temp.drop();
  }
});
