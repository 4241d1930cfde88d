import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiKeyStore } from "../auth/api-keys.js";
import type { Envelope } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { keysInForce } from "../test-support/keys.js";
import { describeEachStore, POSTGRES_AVAILABLE, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "unattended-password";
const SEAL_KEY = randomBytes(32).toString("hex");

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function rpc(rt: TestRuntime, key: string, method: string, params: unknown[]): Promise<Envelope> {
  const { status, json } = await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, bearer(key));
  expect(status).toBe(200);
  return json as Envelope;
}

async function newWallet(rt: TestRuntime, key: string): Promise<{ id: string; address: `0x${string}` }> {
  const { status, json } = await rt.post(
    "/wallet",
    { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
    bearer(key),
  );
  expect(status, JSON.stringify(json)).toBe(200);
  const [record] = json as { id: string; address: `0x${string}` }[];
  return { id: record!.id, address: record!.address };
}

/** Waits for the receipt as a keyed client would (generous deadline: CI machines are busy). */
async function mined(rt: TestRuntime, key: string, hash: string): Promise<{ status: string; nonce: number }> {
  let receipt: { status: string } | null = null;
  const deadline = Date.now() + 60_000;
  while (!receipt && Date.now() < deadline) {
    receipt = (await rpc(rt, key, "eth_getTransactionReceipt", [hash])).result as { status: string } | null;
    if (!receipt) await new Promise((r) => setTimeout(r, 100));
  }
  if (!receipt) throw new Error(`${hash} was not mined`);
  const tx = (await rpc(rt, key, "eth_getTransactionByHash", [hash])).result as { nonce: string };
  return { status: receipt.status, nonce: Number(tx.nonce) };
}

const sendTx = (from: string) => ({ from, to: DEV_ACCOUNT_2, value: "0x1" });

describeEachStore("tenancy and unattended wallets of the custody signer", (target) => {
  let store: TempStore;
  let rt: TestRuntime;
  let admin: string;
  let alice: string;
  let bob: string;
  const env = { CHAINGATE_TRACKER_INTERVAL_MS: "100", CHAINGATE_SEAL_KEY: SEAL_KEY };
  const homeUrl = () => rt.devnet!.nodes.find((n) => n.chainId === 1001)!.url;

  beforeAll(async () => {
    store = await tempStore(target);
    rt = await startTestRuntime({ store, env });
    const keys = new ApiKeyStore(rt.store);
    admin = (await keys.create("admin", "ops")).key;
    alice = (await keys.create("user", "alice")).key;
    bob = (await keys.create("user", "bob")).key;
    await keysInForce(rt, [admin, alice, bob]);
  });
  afterAll(async () => {
    await rt?.close();
    await store?.drop();
  });

  it("tenant B sees none of A's addresses and cannot sign with them, even while A has them unlocked", async () => {
    const wallet = await newWallet(rt, alice);
    expect((await rpc(rt, alice, "personal_unlockAccount", [wallet.address, PASSWORD, 600])).result).toBe(
      true,
    );
    expect((await rpc(rt, alice, "eth_accounts", [])).result).toContain(wallet.address);
    expect((await rpc(rt, bob, "eth_accounts", [])).result).not.toContain(wallet.address);
    for (const [method, params] of [
      ["eth_sendTransaction", [sendTx(wallet.address)]],
      ["eth_sign", [wallet.address, "0x01"]],
      ["personal_sign", ["0x01", wallet.address]],
      ["eth_signTransaction", [sendTx(wallet.address)]],
      // Even with the right password: to B the address does not exist.
      ["personal_unlockAccount", [wallet.address, PASSWORD, 60]],
      ["personal_lockAccount", [wallet.address]],
    ] as const) {
      expect((await rpc(rt, bob, method, [...params])).error, method).toMatchObject({
        code: -32000,
        message: "unknown account",
      });
    }
    // A is still unlocked (B's lock attempt changed nothing) and A's send goes through.
    const hash = (await rpc(rt, alice, "eth_sendTransaction", [sendTx(wallet.address)])).result as string;
    expect((await mined(rt, alice, hash)).status).toBe("0x1");
  });

  it("an admin makes a wallet unattended: it signs with no unlock, survives a restart, and stops when withdrawn", async () => {
    const wallet = await newWallet(rt, alice);
    const byUser = await rt.post(`/wallet/${wallet.id}/unattended`, { password: PASSWORD }, bearer(alice));
    expect(byUser.status).toBe(403);
    const wrong = await rt.post(`/wallet/${wallet.id}/unattended`, { password: "nope" }, bearer(admin));
    expect(wrong.status).toBe(401);
    const made = await rt.post(`/wallet/${wallet.id}/unattended`, { password: PASSWORD }, bearer(admin));
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    expect(made.json).toMatchObject({ unattended: true, addresses: [wallet.address] });
    // Nothing in the store reveals the key without the server key.
    const sealed = await rt.store.db
      .selectFrom("unattended_keys")
      .selectAll()
      .where("wallet_id", "=", wallet.id)
      .execute();
    expect(sealed).toHaveLength(1);
    expect(sealed[0]!.sealed).not.toContain(SEAL_KEY);

    const hash = (await rpc(rt, alice, "eth_sendTransaction", [sendTx(wallet.address)])).result as string;
    expect((await mined(rt, alice, hash)).status).toBe("0x1");
    const listed = await fetch(`${rt.url}/accounts`, { headers: bearer(alice) });
    expect(
      ((await listed.json()) as { address: string; unattended: boolean }[]).find(
        (a) => a.address === wallet.address,
      ),
    ).toMatchObject({ unattended: true, unlocked_until: null });

    // A restart (a second process on the same store and server key) still signs for it.
    const restarted = await startTestRuntime({
      store,
      dataDir: rt.dataDir,
      env: { ...env, CHAINGATE_UPSTREAMS: homeUrl() },
    });
    try {
      const again = await rpc(restarted, alice, "eth_sendTransaction", [sendTx(wallet.address)]);
      expect(again.error).toBeUndefined();
      expect((await mined(rt, alice, again.result as string)).status).toBe("0x1");
    } finally {
      await restarted.close();
    }
    // Under another server key the sealed key does not open, and says why.
    const otherKey = await startTestRuntime({
      store,
      dataDir: rt.dataDir,
      env: { ...env, CHAINGATE_SEAL_KEY: randomBytes(32).toString("hex"), CHAINGATE_UPSTREAMS: homeUrl() },
    });
    try {
      const refused = await rpc(otherKey, alice, "eth_sendTransaction", [sendTx(wallet.address)]);
      expect(refused.error?.message).toMatch(/another server key/);
    } finally {
      await otherKey.close();
    }
    // With no server key at all, it says so (not "another key").
    const noKey = await startTestRuntime({
      store,
      dataDir: rt.dataDir,
      env: { CHAINGATE_TRACKER_INTERVAL_MS: "100", CHAINGATE_UPSTREAMS: homeUrl() },
    });
    try {
      const refused = await rpc(noKey, alice, "eth_sendTransaction", [sendTx(wallet.address)]);
      expect(refused.error?.message).toMatch(/no server key configured/);
      expect(refused.error?.message).not.toMatch(/another server key/);
    } finally {
      await noKey.close();
    }

    const withdrawn = await fetch(`${rt.url}/wallet/${wallet.id}/unattended`, {
      method: "DELETE",
      headers: bearer(alice),
    });
    expect(withdrawn.status).toBe(200);
    expect((await rpc(rt, alice, "eth_sendTransaction", [sendTx(wallet.address)])).error?.message).toMatch(
      /^authentication needed/,
    );
  });

  it("an admin's wrong passwords on a tenant's wallet lock the admin out of it, never the owner", async () => {
    const wallet = await newWallet(rt, alice);
    const guess = () => rt.post(`/wallet/${wallet.id}/unattended`, { password: "a guess" }, bearer(admin));
    const statuses: number[] = [];
    let locked: Awaited<ReturnType<typeof guess>> | undefined;
    while (locked === undefined && statuses.length < 12) {
      const answer = await guess();
      statuses.push(answer.status);
      if (answer.status === 429) locked = answer;
    }
    // Five free guesses (and the one that sets the lock), then the admin key's own lock on this wallet.
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(locked?.json).toMatchObject({ code: "WALLET_LOCKED" });
    // The owner was never locked out: the right password works at once.
    const own = await rpc(rt, alice, "personal_unlockAccount", [wallet.address, PASSWORD, 60]);
    expect(own.error).toBeUndefined();
    expect(own.result).toBe(true);
    const row = await rt.store.db
      .selectFrom("wallets")
      .select(["failed_attempts", "locked_until"])
      .where("id", "=", wallet.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.failed_attempts)).toBe(0);
  });

  it.skipIf(target !== "postgres" || !POSTGRES_AVAILABLE)(
    "200 sends across two instances on one PostgreSQL from an unattended wallet: consecutive nonces, all mined",
    async () => {
      const wallet = await newWallet(rt, alice);
      expect(
        (await rt.post(`/wallet/${wallet.id}/unattended`, { password: PASSWORD }, bearer(admin))).status,
      ).toBe(200);
      const second = await startTestRuntime({
        store,
        dataDir: rt.dataDir,
        env: { ...env, CHAINGATE_UPSTREAMS: homeUrl() },
      });
      try {
        const hashes = await Promise.all(
          Array.from({ length: 200 }, async (_, i) => {
            const answer = await rpc(i % 2 === 0 ? rt : second, alice, "eth_sendTransaction", [
              sendTx(wallet.address),
            ]);
            expect(answer.error).toBeUndefined();
            return answer.result as string;
          }),
        );
        expect(new Set(hashes).size).toBe(200);
        const nonces: number[] = [];
        for (const hash of hashes) {
          const outcome = await mined(rt, alice, hash);
          expect(outcome.status).toBe("0x1");
          nonces.push(outcome.nonce);
        }
        expect(nonces.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      } finally {
        await second.close();
      }
    },
  );
});
