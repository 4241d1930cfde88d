import { mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { openStore } from "./database.js";
import { CHECKPOINT_AT_BYTES, WalCheckpointer } from "./wal-checkpointer.js";

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

it("the request connection never checkpoints; the worker copies a grown WAL into the database", async () => {
  const path = join(dir, "store.db");
  const store = await openStore({ kind: "sqlite", path });
  try {
    const autocheckpoint = (
      await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)
    ).rows[0]?.wal_autocheckpoint;
    expect(autocheckpoint).toBe(0);
    const before = statSync(path).size;
    // Rows until the WAL passes the worker's mark (each about 2 KB).
    const payload = "x".repeat(2_000);
    let n = 0;
    while (statSync(`${path}-wal`).size < CHECKPOINT_AT_BYTES) {
      await store.group.run((trx) =>
        trx
          .insertInto("nonce_ledger")
          .values({ chain_id: 5, address: `${payload}${n++}`, next_nonce: 0 })
          .execute(),
      );
    }
    // Copied into the database file by the worker: this connection never checkpoints.
    // (At least the rows' payloads reach the database file.)
    await until(() => statSync(path).size >= before + n * payload.length, "the checkpoint");
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
    const payload = "y".repeat(2_000);
    let n = 0;
    while (statSync(`${real}-wal`).size < CHECKPOINT_AT_BYTES) {
      await store.group.run((trx) =>
        trx
          .insertInto("nonce_ledger")
          .values({ chain_id: 7, address: `${payload}${n++}`, next_nonce: 0 })
          .execute(),
      );
    }
    await until(() => statSync(real).size >= before + n * payload.length, "the checkpoint");
  } finally {
    await store.close();
  }
});
