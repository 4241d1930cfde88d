import { mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { openStore, type Store } from "./database.js";
import { CHECKPOINT_AT_BYTES, REQUEST_CHECKPOINT_PAGES, WalCheckpointer } from "./wal-checkpointer.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-checkpoint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Waits for a condition with a generous deadline (the machine may be busy): never a fixed delay. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Writes rows (2 KB each) to `chainId` until the WAL beside `realPath` passes the worker's mark; answers how many. */
async function growWal(store: Store, realPath: string, chainId: number, fill: string): Promise<number> {
  const payload = fill.repeat(2_000);
  let n = 0;
  while (statSync(`${realPath}-wal`).size < CHECKPOINT_AT_BYTES) {
    await store.group.run((trx) =>
      trx
        .insertInto("nonce_ledger")
        .values({ chain_id: chainId, address: `${payload}${n++}`, next_nonce: 0 })
        .execute(),
    );
  }
  return n;
}

it("below 16 MB of WAL the request connection does not checkpoint; the worker copies a grown WAL into the database", async () => {
  const path = join(dir, "store.db");
  const store = await openStore({ kind: "sqlite", path });
  try {
    const autocheckpoint = (
      await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)
    ).rows[0]?.wal_autocheckpoint;
    expect(autocheckpoint).toBe(REQUEST_CHECKPOINT_PAGES);
    const before = statSync(path).size;
    // Rows until the WAL passes the worker's mark (each about 2 KB).
    const n = await growWal(store, path, 5, "x");
    // Copied into the database file by the worker: this connection does not checkpoint below 16 MB.
    // (At least the rows' payloads reach the database file.)
    await until(() => statSync(path).size >= before + n * 2_000, "the checkpoint");
    const rows = await store.db
      .selectFrom("nonce_ledger")
      .select("address")
      .where("chain_id", "=", 5)
      .execute();
    expect(rows).toHaveLength(n);
  } finally {
    await store.close();
  }
});

it("a worker that cannot run is reported once, and checkpointing goes back to the request connection", async () => {
  const faults: Error[] = [];
  let fellBack = 0;
  const checkpointer = new WalCheckpointer(
    join(dir, "missing.db"),
    (error) => faults.push(error),
    () => fellBack++,
  );
  await until(() => fellBack > 0, "the fallback");
  expect(fellBack).toBe(1);
  expect(faults).toHaveLength(1);
  expect(faults[0]!.message).toMatch(/WAL checkpoint worker failed: .*(CANTOPEN|unable to open)/);
  await checkpointer.close();
  expect(fellBack).toBe(1);
});

it("through a symlinked database file the worker still watches the WAL SQLite writes (beside the target)", async () => {
  const real = join(dir, "real.db");
  await (await openStore({ kind: "sqlite", path: real })).close();
  const link = join(dir, "link.db");
  symlinkSync(real, link);
  const store = await openStore({ kind: "sqlite", path: link });
  try {
    const before = statSync(real).size;
    const n = await growWal(store, real, 7, "y");
    await until(() => statSync(real).size >= before + n * 2_000, "the checkpoint");
  } finally {
    await store.close();
  }
});

it("under writes that never pause the WAL stays bounded (the request connection's own checkpoint lets it start over)", async () => {
  const path = join(dir, "busy.db");
  const store = await openStore({ kind: "sqlite", path });
  try {
    const payload = "w".repeat(500);
    let n = 0;
    let largestWal = 0;
    // 16 writers at once, so there is always a write in flight, until 32 MB reached the database.
    const writer = async () => {
      while (statSync(path).size < 32 * 1024 * 1024) {
        await store.group.run((trx) =>
          trx
            .insertInto("nonce_ledger")
            .values({ chain_id: 8, address: `${payload}${n++}`, next_nonce: 0 })
            .execute(),
        );
        largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
      }
    };
    await Promise.all(Array.from({ length: 16 }, writer));
    // 16 MB of WAL and the frames of the groups written while the last checkpoint ran.
    expect(largestWal).toBeLessThan(REQUEST_CHECKPOINT_PAGES * 4096 + 8 * 1024 * 1024);
  } finally {
    await store.close();
  }
}, 180_000);
