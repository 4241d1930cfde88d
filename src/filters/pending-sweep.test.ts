import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { openStore, type Store } from "../store/database.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { PendingPool } from "./pending-pool.js";

let store: Store | undefined;
afterAll(() => store?.close());

it("sweeps expired pending hashes while there can be any, and leaves the store alone when idle", async () => {
  store = await openStore({ kind: "sqlite", path: ":memory:" });
  let clock = 1_000_000;
  const pool = new PendingPool({
    store,
    // No chain is watched: what is left is the sweep of recorded hashes.
    chains: { all: () => [] } as unknown as ChainRegistry,
    logger: pino({ level: "silent" }),
    pollMs: 250,
    retainMs: 60_000,
    now: () => clock,
  });
  const poll = () => (pool as unknown as { poll(): Promise<void> }).poll();
  let deletes = 0;
  const db = store.db;
  const deleteFrom = db.deleteFrom.bind(db);
  db.deleteFrom = ((table: never) => {
    deletes++;
    return deleteFrom(table);
  }) as typeof db.deleteFrom;
  const rows = async () =>
    Number(
      (
        await db
          .selectFrom("pending_transactions")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  // Just started: rows from before a restart may exist, so the first polls sweep.
  await poll();
  expect(deletes).toBe(1);
  // Long idle: nothing recorded for longer than the retention, so nothing to sweep.
  clock += 120_000;
  await poll();
  await poll();
  expect(deletes).toBe(1);

  await pool.record(1001, ["0xaa", "0xbb"]);
  clock += 1_000;
  await poll();
  expect(deletes).toBe(2);
  expect(await rows()).toBe(2);
  // Past the retention the hashes go, in the last sweep before the pool falls quiet again.
  clock += 60_000;
  await poll();
  expect(await rows()).toBe(0);
  clock += 10_000;
  const before = deletes;
  await poll();
  expect(deletes).toBe(before);
});
