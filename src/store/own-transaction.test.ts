/** The group's own transactions on file SQLite: Kysely's steps on its own driver, its lock shared with every other query (decision 229). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, type Transaction } from "kysely";
import { afterEach, beforeEach, expect, it } from "vitest";
import { OwnTransactions } from "./own-transaction.js";
import { ResilientDialect } from "./resilient-dialect.js";
import type { Database } from "./schema.js";

let dir: string;
let sqlite: SQLite.Database;
let db: Kysely<Database>;
let own: OwnTransactions;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "chaingate-own-trx-"));
  sqlite = new SQLite(join(dir, "own.sqlite"));
  sqlite.pragma("journal_mode = WAL");
  sqlite.exec("create table nonce_ledger (chain_id integer, address text primary key, next_nonce integer)");
  const dialect = new ResilientDialect(new SqliteDialect({ database: sqlite }));
  db = new Kysely<Database>({ dialect });
  // The driver is made by Kysely's first query, as the migrations make it in the store.
  await db.selectFrom("nonce_ledger").select("address").execute();
  own = new OwnTransactions(dialect, {
    run: (query) => sqlite.prepare(query.sql).run(),
    get inTransaction() {
      return sqlite.inTransaction;
    },
  });
});
afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (trx: Kysely<Database>, address: string) =>
  trx.insertInto("nonce_ledger").values({ chain_id: 1, address, next_nonce: 0 }).execute();
const addresses = () => sqlite.prepare("select address from nonce_ledger order by address").pluck().all();

it("runs the work in a transaction of its own, between the held steps, and commits it", async () => {
  const seen: string[] = [];
  const trxs: Transaction<Database>[] = [];
  for (const address of ["a", "b"])
    await own.run(
      async (trx) => {
        seen.push(`work in transaction: ${sqlite.inTransaction}`);
        trxs.push(trx);
        expect(trx.isTransaction).toBe(true);
        await insert(trx, address);
        return address;
      },
      {
        before: () => seen.push(`before in transaction: ${sqlite.inTransaction}`),
        after: () => seen.push(`after in transaction: ${sqlite.inTransaction}`),
      },
    );
  expect(seen).toEqual([
    "before in transaction: false",
    "work in transaction: true",
    "after in transaction: false",
    "before in transaction: false",
    "work in transaction: true",
    "after in transaction: false",
  ]);
  // A Transaction object each time: what a caller learns in one is not carried to the next.
  expect(trxs[0]).not.toBe(trxs[1]);
  expect(addresses()).toEqual(["a", "b"]);
});

it("rolls back the work's writes when it throws, and the connection serves again", async () => {
  const refused = await own
    .run(
      async (trx) => {
        await insert(trx, "lost");
        throw new Error("refused");
      },
      { before: () => {}, after: () => {} },
    )
    .catch((error: unknown) => error);
  expect((refused as Error).message).toBe("refused");
  expect(sqlite.inTransaction).toBe(false);
  expect(addresses()).toEqual([]);
  await own.run((trx) => insert(trx, "kept"), { before: () => {}, after: () => {} });
  expect(addresses()).toEqual(["kept"]);
});

it("holds the store's one connection: a query through Kysely meanwhile waits, and is not part of the transaction", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let inside!: () => void;
  const begun = new Promise<void>((resolve) => {
    inside = resolve;
  });
  const group = own
    .run(
      async (trx) => {
        await insert(trx, "inside");
        inside();
        await gate;
        throw new Error("rolled back");
      },
      { before: () => {}, after: () => {} },
    )
    .catch(() => "rolled back");
  await begun;
  let outsideDone = false;
  const outside = insert(db, "outside").then(() => {
    outsideDone = true;
  });
  // Several turns of the loop: the outside write is waiting for the connection, not queued behind nothing.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(outsideDone).toBe(false);
  release();
  expect(await group).toBe("rolled back");
  await outside;
  expect(addresses()).toEqual(["outside"]);
});

it("a commit that fails is rolled back and its error given; the next transaction begins cleanly", async () => {
  // A deferred foreign key fails the COMMIT itself, and SQLite leaves the transaction open.
  sqlite.pragma("foreign_keys = ON");
  sqlite.exec(`create table parent (id integer primary key);
    create table child (parent_id integer references parent(id) deferrable initially deferred)`);
  const refused = await own
    .run(
      async () => {
        sqlite.prepare("insert into child (parent_id) values (7)").run();
        return "written";
      },
      { before: () => {}, after: () => {} },
    )
    .catch((error: unknown) => error);
  expect((refused as { code?: string }).code).toBe("SQLITE_CONSTRAINT_FOREIGNKEY");
  expect(sqlite.inTransaction).toBe(false);
  expect(sqlite.prepare("select count(*) from child").pluck().get()).toBe(0);
  await own.run((trx) => insert(trx, "after"), { before: () => {}, after: () => {} });
  expect(addresses()).toEqual(["after"]);
});
