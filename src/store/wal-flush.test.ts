import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { openStore } from "./database.js";
import { WalFlush } from "./wal-flush.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-wal-flush-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a flush asked while one runs waits for the next, which every later asker shares", async () => {
  const path = join(dir, "file-wal");
  writeFileSync(path, "frames");
  const flush = new WalFlush(path);
  const first = flush.flush();
  const second = flush.flush();
  const third = flush.flush();
  // The running flush may have started before the second commit: the second waits for another.
  expect(second).not.toBe(first);
  expect(third).toBe(second);
  await Promise.all([first, second, third]);
  // Nothing runs now: the next asker starts its own.
  const fourth = flush.flush();
  expect(fourth).not.toBe(second);
  await fourth;
  await flush.close();
});

it("an inline flush syncs before it returns once the WAL is open; one asked while a flush runs waits for the next", async () => {
  const path = join(dir, "inline-wal");
  writeFileSync(path, "frames");
  const flush = new WalFlush(path);
  /**
   * Whether a flush settles within this turn's microtasks: an inline one has synced already, one on
   * the thread pool cannot settle before the event loop polls again.
   */
  const settledAtOnce = async (flushed: Promise<void>) => {
    let state = "pending";
    flushed.then(
      () => {
        state = "settled";
      },
      () => {
        state = "failed";
      },
    );
    for (let i = 0; i < 5; i++) await null;
    return state;
  };
  // The WAL is not open yet: the first flush opens it on the thread pool, inline or not.
  const opening = flush.flush(true);
  expect(await settledAtOnce(opening)).toBe("pending");
  await opening;
  expect(await settledAtOnce(flush.flush(true))).toBe("settled");
  // Not inline: the thread pool's.
  const pooled = flush.flush();
  expect(await settledAtOnce(pooled)).toBe("pending");
  await pooled;
  // While a flush runs, an inline one waits for the next, as every other asker does.
  const running = flush.flush();
  const inline = flush.flush(true);
  expect(inline).not.toBe(running);
  expect(flush.flush()).toBe(inline);
  await Promise.all([running, inline]);
  await flush.close();
});

it("a flush that cannot reach the file fails as a store fault not to be repeated blindly", async () => {
  const flush = new WalFlush(join(dir, "missing-wal"));
  await expect(flush.flush()).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", retryable: false });
  await flush.close();
});

it("group commits on a SQLite file relax syncing only for their own commit: the connection is left at FULL", async () => {
  const store = await openStore({ kind: "sqlite", path: join(dir, "store.db") });
  try {
    const synchronous = async () =>
      (await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db)).rows[0]?.synchronous;
    expect(await synchronous()).toBe(2);
    const written = await Promise.all(
      ["a", "b", "c"].map((address) =>
        store.group.run(async (trx) => {
          await trx.insertInto("nonce_ledger").values({ chain_id: 1, address, next_nonce: 0 }).execute();
          return address;
        }),
      ),
    );
    expect(written).toEqual(["a", "b", "c"]);
    expect(await synchronous()).toBe(2);
    // A job alone (no savepoints) takes the same path.
    await store.group.run((trx) =>
      trx.insertInto("nonce_ledger").values({ chain_id: 1, address: "d", next_nonce: 0 }).execute(),
    );
    expect(await synchronous()).toBe(2);
    expect(
      await store.db.selectFrom("nonce_ledger").select("address").where("chain_id", "=", 1).execute(),
    ).toHaveLength(4);
  } finally {
    await store.close();
  }
});

it("a database reached through a symlink commits groups durably and reopens with every row", async () => {
  const real = join(dir, "real.db");
  const first = await openStore({ kind: "sqlite", path: real });
  await first.close();
  const link = join(dir, "link.db");
  symlinkSync(real, link);
  const store = await openStore({ kind: "sqlite", path: link });
  try {
    await Promise.all(
      ["a", "b", "c"].map((address) =>
        store.group.run((trx) =>
          trx.insertInto("nonce_ledger").values({ chain_id: 3, address, next_nonce: 0 }).execute(),
        ),
      ),
    );
  } finally {
    await store.close();
  }
  const again = await openStore({ kind: "sqlite", path: real });
  try {
    const rows = await again.db
      .selectFrom("nonce_ledger")
      .select("address")
      .where("chain_id", "=", 3)
      .execute();
    expect(rows.map((r) => r.address).sort()).toEqual(["a", "b", "c"]);
  } finally {
    await again.close();
  }
});
