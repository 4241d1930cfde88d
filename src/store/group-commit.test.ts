import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { CompiledQuery, Kysely, SqliteDialect, sql, type Transaction } from "kysely";
import { expect, it } from "vitest";
import { describeEachStore, suiteStore, tempStore } from "../test-support/stores.js";
import { openStore } from "./database.js";
import { GroupCommit, LastStatement, MAX_GROUP } from "./group-commit.js";
import type { Database } from "./schema.js";

describeEachStore("group commit", (target) => {
  const opened = suiteStore(target);
  let chain = 0;

  /** A ledger row of its own for each test (the table has a plain composite key). */
  const insert = (trx: Transaction<Database>, c: number, address: string) =>
    trx.insertInto("nonce_ledger").values({ chain_id: c, address, next_nonce: 0 }).execute();
  const addresses = async (c: number) =>
    (await opened.store.db.selectFrom("nonce_ledger").select("address").where("chain_id", "=", c).execute())
      .map((r) => r.address)
      .sort();

  it("jobs queued in one turn share one transaction, and each result is committed when it resolves", async () => {
    const c = ++chain;
    const trxs = await Promise.all(
      ["a", "b", "c", "d", "e"].map((address) =>
        opened.store.group.run(async (trx) => {
          await insert(trx, c, address);
          return trx;
        }),
      ),
    );
    expect(new Set(trxs).size).toBe(1);
    expect(await addresses(c)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("items joined in one turn share one job and one transaction; a later turn starts another", async () => {
    const c = ++chain;
    const runs: string[][] = [];
    const join = (address: string) =>
      opened.store.group.join(`test:${c}`, address, async (trx, items: string[]) => {
        runs.push([...items]);
        for (const item of items) await insert(trx, c, item);
      });
    await Promise.all(["a", "b", "c"].map(join));
    await join("d");
    expect(runs).toEqual([["a", "b", "c"], ["d"]]);
    expect(await addresses(c)).toEqual(["a", "b", "c", "d"]);
  });

  it("a joined batch whose group is lost before its job runs is not joined again: the next item starts a new one", async () => {
    let lose = true;
    // The store's Kysely, except that while `lose` holds no transaction can begin (a dead connection).
    const db = new Proxy(opened.store.db, {
      get(target, property) {
        if (property === "transaction" && lose)
          return () => ({
            execute: async () => {
              throw new Error("connection lost before the job ran");
            },
          });
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const group = new GroupCommit(db, 1);
    const ran: number[][] = [];
    const work = async (_trx: Transaction<Database>, items: number[]) => {
      ran.push([...items]);
    };
    await expect(group.join("lost", 1, work)).rejects.toThrow("connection lost");
    lose = false;
    await group.join("lost", 2, work);
    expect(ran).toEqual([[2]]);
  });

  /** A job of `group` that inserts `address` on chain `c` and answers its transaction. */
  const inserting = (group: GroupCommit, c: number) => (address: string, lazy: boolean) =>
    group.run(
      async (trx) => {
        await insert(trx, c, address);
        return trx;
      },
      "",
      lazy,
    );

  it("a lazy job alone is written on its own after a while", async () => {
    const c = ++chain;
    const job = inserting(new GroupCommit(opened.store.db, 1), c);
    await job("a", true);
    expect(await addresses(c)).toEqual(["a"]);
  });

  it("lazy jobs share a group apart from the others, and closing waits for it", async () => {
    const c = ++chain;
    const group = new GroupCommit(opened.store.db, 1);
    const job = inserting(group, c);
    const lazies = [job("a", true), job("b", true)];
    const eager = await job("c", false);
    const [first, second] = await Promise.all(lazies);
    expect(first).toBe(second);
    expect(first).not.toBe(eager);
    // Queued and left to its timer: drain writes it at once and waits for it.
    const late = job("d", true);
    await group.drain();
    expect(await addresses(c)).toEqual(["a", "b", "c", "d"]);
    await late;
  });

  it("a job that throws leaves nothing behind and fails alone; the others of its group commit", async () => {
    const c = ++chain;
    const outcomes = await Promise.allSettled(
      ["a", "b", "c"].map((address) =>
        opened.store.group.run(async (trx) => {
          await insert(trx, c, address);
          if (address === "b") {
            // Written, then refused (as a rolling limit refuses after reading under the lock).
            await insert(trx, c, "b-extra");
            throw new Error("refused b");
          }
          return address;
        }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("refused b");
    expect(await addresses(c)).toEqual(["a", "c"]);
  });

  it("a statement error inside a job rolls back to its savepoint; the group goes on", async () => {
    const c = ++chain;
    const outcomes = await Promise.allSettled([
      opened.store.group.run((trx) => insert(trx, c, "a")),
      // The same key twice: a constraint violation, which on PostgreSQL aborts the transaction
      // unless it is rolled back to the job's savepoint.
      opened.store.group.run((trx) => insert(trx, c, "a")),
      opened.store.group.run((trx) => insert(trx, c, "z")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await addresses(c)).toEqual(["a", "z"]);
  });

  /** A job that inserts `first`, then ends with the insert of `last` on the wire (a LastStatement). */
  const endingWith = (c: number, first: string, last: string) => async (trx: Transaction<Database>) => {
    await insert(trx, c, first);
    return LastStatement.send(
      trx,
      trx.insertInto("nonce_ledger").values({ chain_id: c, address: last, next_nonce: 0 }).compile(),
    );
  };

  it("a job that ends with its last statement on the wire commits it; when that statement fails, none of the job's writes is kept", async () => {
    const c = ++chain;
    // Alone in its group (on PostgreSQL its commit goes behind the statement, unanswered).
    expect(await opened.store.group.run(endingWith(c, "a", "b"))).toBeUndefined();
    expect(await addresses(c)).toEqual(["a", "b"]);
    // "a" again: a constraint violation, heard only after the commit was sent on PostgreSQL, and on
    // SQLite (where a failed statement aborts nothing) before the commit.
    await expect(opened.store.group.run(endingWith(c, "c", "a"))).rejects.toThrow(/unique|duplicate/i);
    expect(await addresses(c)).toEqual(["a", "b"]);
    // In a group of several it fails alone, and the others commit.
    const outcomes = await Promise.allSettled([
      opened.store.group.run(endingWith(c, "d", "e")),
      opened.store.group.run(endingWith(c, "f", "b")),
      opened.store.group.run(endingWith(c, "g", "h")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await addresses(c)).toEqual(["a", "b", "d", "e", "g", "h"]);
  });

  it("a joined job's last statement that fails fails its batch, mapped as the job says", async () => {
    const c = ++chain;
    await opened.store.group.run((trx) => insert(trx, c, "taken"));
    const join = (address: string) =>
      opened.store.group.join(`last:${c}`, address, async (trx, items: string[]) => {
        for (const item of items.slice(1)) await insert(trx, c, item);
        return LastStatement.send(
          trx,
          trx.insertInto("nonce_ledger").values({ chain_id: c, address: items[0]!, next_nonce: 0 }).compile(),
        ).failingWith((error) => new Error(`batch taken back: ${(error as Error).message}`));
      });
    const outcomes = await Promise.allSettled(["taken", "x", "y"].map(join));
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason.message).toMatch(
        /^batch taken back: .*(unique|duplicate)/i,
      );
    }
    expect(await addresses(c)).toEqual(["taken"]);
    await Promise.all(["ok", "x", "y"].map(join));
    expect(await addresses(c)).toEqual(["ok", "taken", "x", "y"]);
  });

  it("jobs run in the order of their lock keys, one key's jobs in arrival order", async () => {
    const order: string[] = [];
    const job = (name: string) => async () => {
      order.push(name);
    };
    await Promise.all([
      opened.store.group.run(job("k2-first"), "k2"),
      opened.store.group.run(job("k1-first"), "k1"),
      opened.store.group.run(job("k2-second"), "k2"),
      opened.store.group.run(job("k1-second"), "k1"),
    ]);
    expect(order).toEqual(["k1-first", "k1-second", "k2-first", "k2-second"]);
  });

  it("a job keeps its caller's async context", async () => {
    const context = new AsyncLocalStorage<string>();
    const seen = await Promise.all(
      ["r1", "r2", "r3"].map((request) =>
        context.run(request, () => opened.store.group.run(async () => context.getStore())),
      ),
    );
    expect(seen).toEqual(["r1", "r2", "r3"]);
  });

  it(`a group holds at most ${MAX_GROUP} jobs`, async () => {
    const c = ++chain;
    const count = MAX_GROUP * 2 + 1;
    const trxs = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        opened.store.group.run(async (trx) => {
          await insert(trx, c, `a${i}`);
          return trx;
        }),
      ),
    );
    expect(new Set(trxs).size).toBe(3);
    expect(await addresses(c)).toHaveLength(count);
  });

  it("a job joined apart carries at most its count of items and is a group of its own, in arrival order", async () => {
    const c = ++chain;
    const runs: { items: string[]; trx: Transaction<Database> }[] = [];
    const join = (address: string) =>
      opened.store.group.join(
        `apart:${c}`,
        address,
        async (trx, items: string[]) => {
          runs.push({ items: [...items], trx });
          for (const item of items) await insert(trx, c, item);
        },
        "",
        { apart: 2 },
      );
    const plain = (address: string) =>
      opened.store.group.run(async (trx) => {
        await insert(trx, c, address);
        return trx;
      });
    // One turn: two plain jobs, five joined items, one plain job behind them.
    const [p1, p2, , , , , , p3] = await Promise.all([
      plain("p1"),
      plain("p2"),
      ...["a", "b", "c", "d", "e"].map(join),
      plain("p3"),
    ]);
    expect(runs.map((run) => run.items)).toEqual([["a", "b"], ["c", "d"], ["e"]]);
    // Each joined job in a transaction of its own, shared with no other job.
    const joinedTrxs = runs.map((run) => run.trx);
    expect(new Set(joinedTrxs).size).toBe(3);
    expect(p1).toBe(p2);
    for (const trx of [p1, p2, p3]) expect(joinedTrxs).not.toContain(trx);
    expect(await addresses(c)).toEqual(["a", "b", "c", "d", "e", "p1", "p2", "p3"]);
  });

  it("a job that lost a lock conflict is run once more, alone", async () => {
    const c = ++chain;
    let tries = 0;
    const [, retried] = await Promise.all([
      opened.store.group.run((trx) => insert(trx, c, "a")),
      opened.store.group.run(async (trx) => {
        tries++;
        await insert(trx, c, "b");
        // What PostgreSQL says to the loser of a deadlock.
        if (tries === 1) throw Object.assign(new Error("deadlock detected"), { code: "40P01" });
        return "second try";
      }),
    ]);
    expect(retried).toBe("second try");
    expect(tries).toBe(2);
    expect(await addresses(c)).toEqual(["a", "b"]);
  });

  it("a group waits for its flush on the event loop only when nothing is queued behind it and the loop is free", async () => {
    const c = ++chain;
    const asked: boolean[] = [];
    const group = new GroupCommit(opened.store.db, 1, {
      durability: {
        relax: CompiledQuery.raw("select 1"),
        restore: CompiledQuery.raw("select 1"),
        flush: async (inline) => {
          asked.push(inline);
        },
      },
    });
    // Not told the loop is free: never inline.
    await group.run((trx) => insert(trx, c, "a"));
    expect(asked).toEqual([false]);
    let free = true;
    group.flushInlineWhen(() => free);
    await group.run((trx) => insert(trx, c, "b"));
    expect(asked).toEqual([false, true]);
    // A job queued while the group is written waits behind it: that group's flush leaves the loop free.
    let behind: Promise<unknown> | undefined;
    await group.run(async (trx) => {
      behind = group.run((later) => insert(later, c, "d"));
      await insert(trx, c, "c");
    });
    await behind;
    expect(asked).toEqual([false, true, false, true]);
    free = false;
    await group.run((trx) => insert(trx, c, "e"));
    expect(asked).toEqual([false, true, false, true, false]);
    expect(await addresses(c)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("closing the store waits for the jobs already queued", async () => {
    const own = await tempStore(target);
    const other = await openStore(own.location);
    const c = ++chain;
    try {
      const queued = Promise.all(
        ["a", "b"].map((address) => other.group.run((trx) => insert(trx, c, address))),
      );
      await other.close();
      await queued;
      const reopened = await openStore(own.location);
      try {
        const rows = await reopened.db
          .selectFrom("nonce_ledger")
          .select("address")
          .where("chain_id", "=", c)
          .execute();
        expect(rows.map((r) => r.address).sort()).toEqual(["a", "b"]);
      } finally {
        await reopened.close();
      }
    } finally {
      await own.drop();
    }
  });

  it.runIf(target === "postgres")(
    "a group whose connection dies fails every job in it, and keeps none of their writes",
    async () => {
      const c = ++chain;
      const outcomes = await Promise.allSettled([
        opened.store.group.run((trx) => insert(trx, c, "a")),
        opened.store.group.run(async (trx) => {
          await sql`select pg_terminate_backend(pg_backend_pid())`.execute(trx);
        }),
        opened.store.group.run((trx) => insert(trx, c, "z")),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
      for (const outcome of outcomes)
        expect((outcome as PromiseRejectedResult).reason.code).toBe("STORE_UNAVAILABLE");
      expect(await addresses(c)).toEqual([]);
      // The opened.store serves again on a fresh connection.
      await opened.store.group.run((trx) => insert(trx, c, "after"));
      expect(await addresses(c)).toEqual(["after"]);
    },
  );
});

it("on a synchronous connection the group's savepoints and pragmas run as its own statements, in order with its jobs' (decision 202)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "chaingate-own-"));
  const sqlite = new SQLite(join(dir, "own.sqlite"));
  try {
    sqlite.exec("create table nonce_ledger (chain_id integer, address text primary key, next_nonce integer)");
    const throughKysely: string[] = [];
    const own: string[] = [];
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: sqlite }),
      log: (event) => {
        throughKysely.push(event.query.sql);
      },
    });
    const group = new GroupCommit(db, 1, {
      durability: {
        relax: CompiledQuery.raw("pragma synchronous = NORMAL"),
        restore: CompiledQuery.raw("pragma synchronous = FULL"),
        flush: async () => {},
      },
      own: {
        run: (query) => {
          own.push(query.sql);
          sqlite.prepare(query.sql).run();
        },
      },
    });
    const insert = (trx: Transaction<Database>, address: string) =>
      trx.insertInto("nonce_ledger").values({ chain_id: 1, address, next_nonce: 0 }).execute();
    const outcomes = await Promise.allSettled([
      group.run((trx) => insert(trx, "a")),
      group.run(async (trx) => {
        await insert(trx, "b");
        throw new Error("refused b");
      }),
      group.run((trx) => insert(trx, "c")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(sqlite.prepare("select address from nonce_ledger order by address").pluck().all()).toEqual([
      "a",
      "c",
    ]);
    expect(own).toEqual([
      "pragma synchronous = NORMAL",
      "savepoint job",
      "release savepoint job",
      "savepoint job",
      "rollback to savepoint job",
      "release savepoint job",
      "savepoint job",
      "pragma synchronous = FULL",
    ]);
    expect(throughKysely.filter((s) => /savepoint|pragma/.test(s))).toEqual([]);
    await group.drain();
    await db.destroy();
  } finally {
    if (sqlite.open) sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
