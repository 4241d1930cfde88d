import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { result } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { POSTGRES_AVAILABLE, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { newWallet, retryUntilHashed, sendWithKey } from "../test-support/token-helpers.js";

/** What a PostgreSQL restart, a managed failover or a pooler restart does to every connection. */
async function terminateBackends(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: inject("postgresUrl")! });
  await admin.connect();
  try {
    const { rowCount } = await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
      [database],
    );
    return rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe.skipIf(!POSTGRES_AVAILABLE)("PostgreSQL connections dropped under chaingate [postgres]", () => {
  let store: TempStore;
  let rt: TestRuntime;
  let database: string;
  beforeAll(async () => {
    store = await tempStore("postgres");
    database = new URL(store.databaseUrl!).pathname.slice(1);
    rt = await startTestRuntime({ store, env: { CHAINGATE_TRACKER_INTERVAL_MS: "100" } });
  });
  afterAll(async () => {
    // Every pool is closed before the database is dropped.
    await rt?.close();
    await store?.drop();
  });

  const send = (walletId: string, key: string) => sendWithKey(rt, walletId, key, RECIPIENT);

  it("three terminations in a row: the process keeps serving, reads come back and the next send is mined", async () => {
    const wallet = await newWallet(rt);
    for (let round = 0; round < 3; round++) {
      expect(await terminateBackends(database)).toBeGreaterThan(0);
      // Reads work again within seconds (the first one may already succeed on a fresh connection).
      expect(await waitUntil(async () => (await rt.post("/list_all_transfers")).status === 200, 20_000)).toBe(
        true,
      );
      const listed = await fetch(`${rt.url}/wallet`);
      expect(listed.status).toBe(200);
      const sent = await send(wallet.id, `round-${round}`);
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      const hash = (sent.json as { tx_hash: string }).tx_hash;
      expect(
        await waitUntil(async () => (await result(rt, "eth_getTransactionReceipt", [hash])) !== null, 30_000),
      ).toBe(true);
    }
  });

  it("terminations in the middle of a burst: every answer is a hash or a retryable 503, retries finish the rest, and the nonces have no gap", async () => {
    const wallet = await newWallet(rt);
    const keys = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    const hashes = new Map<string, string>();
    const outcomes: number[] = [];
    const first = Promise.all(
      keys.map(async (key) => {
        const answer = await send(wallet.id, key);
        outcomes.push(answer.status);
        if (answer.status === 200) hashes.set(key, (answer.json as { tx_hash: string }).tx_hash);
        else {
          // The only failure a dropped connection may cause: retryable, named, no internal error.
          expect(answer.status, JSON.stringify(answer.json)).toBe(503);
          expect(answer.json).toMatchObject({ code: "STORE_UNAVAILABLE", retryable: true });
        }
      }),
    );
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 30));
      await terminateBackends(database);
    }
    await first;
    // Retry what did not get a hash, with the same keys, until each has one.
    expect(await retryUntilHashed((key) => send(wallet.id, key), keys, hashes)).toBe(true);
    process.stdout.write(
      `connection loss: ${outcomes.filter((s) => s === 200).length} of ${keys.length} answered at once, ` +
        `${outcomes.filter((s) => s === 503).length} got a retryable 503\n`,
    );
    expect(new Set(hashes.values()).size).toBe(keys.length);
    // Every hash mined, at nonces 0..39 without gap or repeat.
    const nonces: number[] = [];
    for (const hash of hashes.values()) {
      expect(
        await waitUntil(async () => (await result(rt, "eth_getTransactionReceipt", [hash])) !== null, 30_000),
        hash,
      ).toBe(true);
      nonces.push(Number((await result<{ nonce: string }>(rt, "eth_getTransactionByHash", [hash])).nonce));
    }
    expect(nonces.sort((a, b) => a - b)).toEqual(keys.map((_, i) => i));
    const rows = await rt.store.db
      .selectFrom("transactions")
      .select(["nonce", "state"])
      .where("from_address", "=", wallet.address)
      .execute();
    // Nothing was signed that the chain did not get: one row per nonce, none left behind.
    expect(
      rows
        .filter((r) => r.state !== "failed")
        .map((r) => r.nonce)
        .sort((a, b) => a - b),
    ).toEqual(keys.map((_, i) => i));
  });
});
