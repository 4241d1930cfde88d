import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { parseEther, toHex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiKeyStore } from "../auth/api-keys.js";
import type { Envelope } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT, DEV_ACCOUNT_2, typedFields } from "../test-support/evm-fixtures.js";
import { keysInForce } from "../test-support/keys.js";
import { describeEachStore, POSTGRES_AVAILABLE, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { type Receiver, startReceiver } from "../test-support/webhook-receiver.js";

const PASSWORD = "policy-password";
const SEAL_KEY = randomBytes(32).toString("hex");
const ALLOWED = DEV_ACCOUNT_2;
const OTHER = DEV_ACCOUNT;
const TENTH = parseEther("0.1");

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** Runs `chaingate policies ...` against the test's store, as an operator would. */
async function cli(rt: TestRuntime, store: TempStore, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", MAIN, "policies", ...args, "--data-dir", rt.dataDir],
    { env: { ...process.env, ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}) } },
  );
  return stdout.trim();
}

async function rpc(rt: TestRuntime, key: string, method: string, params: unknown[]): Promise<Envelope> {
  const { status, json } = await rt.post("/", { jsonrpc: "2.0", id: 1, method, params }, bearer(key));
  expect(status).toBe(200);
  return json as Envelope;
}

async function get(rt: TestRuntime, key: string, path: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${rt.url}${path}`, { headers: bearer(key) });
  return { status: response.status, json: await response.json() };
}

interface AuditRow {
  api_key_id: string | null;
  decision: string;
  rule: string | null;
  operation: string;
  to: string | null;
  value: string | null;
  tx_hash: string | null;
  policy_id: string | null;
}

describeEachStore("signing policies and the audit log", (target) => {
  let store: TempStore;
  let rt: TestRuntime;
  let admin: string;
  let aliceId: string;
  let alice: string;
  let bob: string;
  let bobId: string;
  const env = {
    CHAINGATE_TRACKER_INTERVAL_MS: "100",
    CHAINGATE_SEAL_KEY: SEAL_KEY,
    CHAINGATE_WEBHOOK_ALLOW_PRIVATE: "true",
    CHAINGATE_WEBHOOK_INTERVAL_MS: "50",
  };
  const homeUrl = () => rt.devnet!.nodes.find((n) => n.chainId === 1001)!.url;
  /** On PostgreSQL, another instance on the same store and node: rolling limits must hold across both. */
  const secondInstance = async () =>
    target === "postgres" && POSTGRES_AVAILABLE
      ? await startTestRuntime({
          store,
          dataDir: rt.dataDir,
          env: { ...env, CHAINGATE_UPSTREAMS: homeUrl() },
        })
      : undefined;

  /** A funded wallet of alice's, unattended so that every instance can sign for it. */
  async function unattendedWallet(): Promise<{ id: string; address: `0x${string}` }> {
    const made = await rt.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
      bearer(alice),
    );
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    const [record] = made.json as { id: string; address: `0x${string}` }[];
    const sealed = await rt.post(`/wallet/${record!.id}/unattended`, { password: PASSWORD }, bearer(admin));
    expect(sealed.status, JSON.stringify(sealed.json)).toBe(200);
    return { id: record!.id, address: record!.address };
  }

  async function policy(body: unknown): Promise<{ id: string }> {
    const made = await rt.post("/policies", body, bearer(admin));
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    return made.json as { id: string };
  }

  const send = (instance: TestRuntime, from: string, to: string, value: bigint) =>
    rpc(instance, alice, "eth_sendTransaction", [{ from, to, value: toHex(value) }]);

  beforeAll(async () => {
    store = await tempStore(target);
    rt = await startTestRuntime({ store, env });
    const keys = new ApiKeyStore(rt.store);
    admin = (await keys.create("admin", "ops")).key;
    const made = await keys.create("user", "alice");
    alice = made.key;
    aliceId = made.id;
    const bobs = await keys.create("user", "bob");
    bob = bobs.key;
    bobId = bobs.id;
    await keysInForce(rt, [admin, alice, bob]);
  });
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await rt?.close();
    await store?.drop();
    for (const receiver of receivers) await receiver.down();
  });

  it("only an admin manages policies, and a policy must bind something", async () => {
    const byUser = await rt.post("/policies", { name: "x", api_key_id: aliceId, rules: {} }, bearer(alice));
    expect(byUser.status).toBe(403);
    expect(byUser.json).toMatchObject({ code: "ADMIN_REQUIRED" });
    const unbound = await rt.post("/policies", { name: "x", rules: {} }, bearer(admin));
    expect(unbound.status).toBe(400);
    expect(unbound.json).toMatchObject({ code: "INVALID_POLICY" });
    const badRule = await rt.post(
      "/policies",
      { name: "x", api_key_id: aliceId, rules: { max_value_per_day: 5 } },
      bearer(admin),
    );
    expect(badRule.status).toBe(400);
    expect((await get(rt, alice, "/policies")).status).toBe(403);
  });

  it("one recipient and 1 ETH a day: another recipient is refused by rule, sends pass until the day's sum would exceed 1 ETH", async () => {
    const wallet = await unattendedWallet();
    // Alice hears her denials; Bob, another tenant, hears none of them.
    const aliceHears = await startReceiver();
    const bobHears = await startReceiver();
    receivers.push(aliceHears, bobHears);
    for (const [key, receiver] of [
      [alice, aliceHears],
      [bob, bobHears],
    ] as const) {
      const hook = await rt.post("/webhooks", { url: receiver.url, events: ["policy.denied"] }, bearer(key));
      expect(hook.status, JSON.stringify(hook.json)).toBe(200);
    }
    const made = await policy({
      name: "one recipient, 1 ETH a day",
      wallet_id: wallet.id,
      rules: { recipients: [ALLOWED], max_value_per_day: parseEther("1").toString() },
    });

    const elsewhere = await send(rt, wallet.address, OTHER, TENTH);
    expect(elsewhere.error).toMatchObject({
      code: -32003,
      data: { rule: "recipients", policy_id: made.id },
    });
    // The REST route answers the same refusal as a problem.
    const rest = await rt.post(
      "/transaction",
      {
        wallet_id: wallet.id,
        index: 0,
        password: PASSWORD,
        transaction: { to: OTHER, value: TENTH.toString(), data: "0x" },
      },
      bearer(alice),
    );
    expect(rest.status, JSON.stringify(rest.json)).toBe(403);
    expect(rest.json).toMatchObject({ code: "POLICY_DENIED", errors: { rule: "recipients" } });

    const hashes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const sent = await send(rt, wallet.address, ALLOWED, TENTH);
      expect(sent.error, `send ${i + 1}`).toBeUndefined();
      hashes.push(sent.result as string);
    }
    const over = await send(rt, wallet.address, ALLOWED, 1n);
    expect(over.error).toMatchObject({
      code: -32003,
      data: { rule: "max_value_per_day", policy_id: made.id },
    });
    expect(over.error?.message).toMatch(/^refused by policy/);

    // Every decision is in the audit log, with the key that asked, newest first.
    const audit = await get(rt, admin, `/audit?wallet_id=${wallet.id}&limit=100`);
    expect(audit.status).toBe(200);
    const entries = (audit.json as { entries: AuditRow[] }).entries;
    const allowed = entries.filter((e) => e.decision === "allowed");
    const denied = entries.filter((e) => e.decision === "denied");
    expect(allowed.map((e) => e.tx_hash).sort()).toEqual([...hashes].sort());
    expect(allowed.every((e) => e.api_key_id === aliceId && e.value === TENTH.toString())).toBe(true);
    expect(denied.map((e) => e.rule)).toEqual(["max_value_per_day", "recipients", "recipients"]);
    expect(denied.every((e) => e.api_key_id === aliceId && e.policy_id === made.id)).toBe(true);
    expect(denied[1]!.to).toBe(OTHER.toLowerCase());
    expect(await waitUntil(() => aliceHears.deliveries.length >= 3, 60_000)).toBe(true);
    expect(aliceHears.deliveries.map((d) => d.body.data.rule).sort()).toEqual([
      "max_value_per_day",
      "recipients",
      "recipients",
    ]);
    expect(
      aliceHears.deliveries.every(
        (d) => d.body.type === "policy.denied" && d.body.data.policy_id === made.id,
      ),
    ).toBe(true);
    expect(bobHears.deliveries).toEqual([]);

    // A user key reads only its own entries; an admin's policy change is the admin's.
    const own = (await get(rt, bob, "/audit?limit=1000")).json as { entries: AuditRow[] };
    expect(own.entries.every((e) => e.api_key_id !== aliceId)).toBe(true);
    const changes = (await get(rt, admin, "/audit?decision=change&operation=policy.create")).json as {
      entries: AuditRow[];
    };
    expect(changes.entries.some((e) => e.policy_id === made.id)).toBe(true);
  });

  it("typed data outside the domain list is refused; personal_sign is refused where message signing is off", async () => {
    const wallet = await unattendedWallet();
    await policy({
      name: "typed data for one app",
      wallet_id: wallet.id,
      rules: { typed_data_domains: [{ name: "Allowed App", chainId: 1001 }] },
    });
    const typed = (name: string) => ({
      types: {
        EIP712Domain: typedFields("name string, chainId uint256"),
        Note: [{ name: "text", type: "string" }],
      },
      primaryType: "Note",
      domain: { name, chainId: 1001 },
      message: { text: "hello" },
    });
    const listed = await rpc(rt, alice, "eth_signTypedData_v4", [wallet.address, typed("Allowed App")]);
    expect(listed.error).toBeUndefined();
    expect(listed.result).toMatch(/^0x[0-9a-f]{130}$/);
    const unlisted = await rpc(rt, alice, "eth_signTypedData_v4", [wallet.address, typed("Drainer")]);
    expect(unlisted.error).toMatchObject({ code: -32003, data: { rule: "typed_data_domains" } });
    // personal_sign is not typed data: this policy lets it through.
    expect((await rpc(rt, alice, "personal_sign", ["0x01", wallet.address])).error).toBeUndefined();

    const noMessages = await policy({
      name: "no messages",
      api_key_id: aliceId,
      rules: { message_signing: false },
    });
    for (const [method, params] of [
      ["personal_sign", ["0x68656c6c6f", wallet.address]],
      ["eth_sign", [wallet.address, "0x01"]],
      ["eth_signTypedData_v4", [wallet.address, typed("Allowed App")]],
    ] as const) {
      const refused = await rpc(rt, alice, method, [...params]);
      expect(refused.error, method).toMatchObject({ code: -32003, data: { rule: "message_signing" } });
    }
    const entries = (
      (await get(rt, admin, `/audit?wallet_id=${wallet.id}&decision=denied`)).json as {
        entries: AuditRow[];
      }
    ).entries;
    expect(entries.map((e) => e.operation).sort()).toEqual([
      "eth_sign",
      "eth_signTypedData_v4",
      "eth_signTypedData_v4",
      "personal_sign",
    ]);
    // Deleted, it no longer applies (and the deletion is audited).
    const deleted = await fetch(`${rt.url}/policies/${noMessages.id}`, {
      method: "DELETE",
      headers: bearer(admin),
    });
    expect(deleted.status).toBe(204);
    expect((await rpc(rt, alice, "personal_sign", ["0x01", wallet.address])).error).toBeUndefined();
    expect((await get(rt, admin, `/policies/${noMessages.id}`)).status).toBe(404);
  });

  it("a policy made after a wallet's sends binds its next send (read in the record's own transaction)", async () => {
    const wallet = await unattendedWallet();
    // The first send reads the wallet's policies (none); the next ones may leave the read to the record.
    for (let i = 0; i < 2; i++) expect((await send(rt, wallet.address, OTHER, TENTH)).error).toBeUndefined();
    const before = { ...rt.pipeline.recorded };
    // Bound to the wallet and to another key: not alice's, so her sends stay recorded together.
    await policy({
      name: "bob's",
      wallet_id: wallet.id,
      api_key_id: bobId,
      rules: { recipients: [ALLOWED] },
    });
    expect((await send(rt, wallet.address, OTHER, TENTH)).error).toBeUndefined();
    expect(rt.pipeline.recorded.together - before.together).toBe(1);
    expect(rt.pipeline.recorded.alone - before.alone).toBe(0);
    const made = await policy({
      name: "one recipient",
      wallet_id: wallet.id,
      rules: { recipients: [ALLOWED] },
    });
    const refused = await send(rt, wallet.address, OTHER, TENTH);
    expect(refused.error).toMatchObject({ code: -32003, data: { rule: "recipients", policy_id: made.id } });
    expect((await send(rt, wallet.address, ALLOWED, TENTH)).error).toBeUndefined();
  });

  it("a policy bound to the caller's key alone, made after its sends, binds the next send", async () => {
    const wallet = await unattendedWallet();
    for (let i = 0; i < 2; i++) expect((await send(rt, wallet.address, OTHER, TENTH)).error).toBeUndefined();
    const made = await policy({
      name: "alice's recipients",
      api_key_id: aliceId,
      rules: { recipients: [ALLOWED] },
    });
    try {
      const refused = await send(rt, wallet.address, OTHER, TENTH);
      expect(refused.error).toMatchObject({ code: -32003, data: { rule: "recipients", policy_id: made.id } });
    } finally {
      // Bound to alice's key, it would bind every other test's sends.
      const deleted = await fetch(`${rt.url}/policies/${made.id}`, {
        method: "DELETE",
        headers: bearer(admin),
      });
      expect(deleted.status).toBe(204);
    }
    expect((await send(rt, wallet.address, OTHER, TENTH)).error).toBeUndefined();
  });

  it("a fee cap and a gas cap refuse before anything is signed; eth_signTransaction counts against the day", async () => {
    const wallet = await unattendedWallet();
    await policy({
      name: "caps",
      wallet_id: wallet.id,
      rules: { max_gas: "100000", max_fee_per_gas: "1000000000000", max_value_per_day: TENTH.toString() },
    });
    const tooMuchGas = await rpc(rt, alice, "eth_sendTransaction", [
      { from: wallet.address, to: ALLOWED, value: "0x1", gas: toHex(200_000) },
    ]);
    expect(tooMuchGas.error).toMatchObject({ code: -32003, data: { rule: "max_gas" } });
    const tooDear = await rpc(rt, alice, "eth_sendTransaction", [
      { from: wallet.address, to: ALLOWED, value: "0x1", gasPrice: toHex(2_000_000_000_000n) },
    ]);
    expect(tooDear.error).toMatchObject({ code: -32003, data: { rule: "max_fee_per_gas" } });
    const signed = await rpc(rt, alice, "eth_signTransaction", [
      { from: wallet.address, to: ALLOWED, value: toHex(TENTH) },
    ]);
    expect(signed.error).toBeUndefined();
    // The signed bytes could be sent by anyone: the day's allowance is spent.
    const after = await send(rt, wallet.address, ALLOWED, 1n);
    expect(after.error).toMatchObject({ code: -32003, data: { rule: "max_value_per_day" } });
    const rows = await rt.store.db
      .selectFrom("transactions")
      .select("id")
      .where("from_address", "=", wallet.address)
      .execute();
    expect(rows).toEqual([]);
  });

  it("20 concurrent sends against a 1 ETH day never pass it (one instance, or two on one PostgreSQL)", async () => {
    const wallet = await unattendedWallet();
    await policy({
      name: "1 ETH a day",
      wallet_id: wallet.id,
      rules: { max_value_per_day: parseEther("1").toString() },
    });
    const second = await secondInstance();
    try {
      // 0.15 ETH each: six fit in 1 ETH (0.9), the seventh would not.
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          send(i % 2 === 1 && second ? second : rt, wallet.address, ALLOWED, parseEther("0.15")),
        ),
      );
      const sent = answers.filter((a) => a.error === undefined);
      const refused = answers.filter((a) => a.error !== undefined);
      expect(sent).toHaveLength(6);
      expect(
        refused.every((a) => (a.error?.data as { rule?: string } | undefined)?.rule === "max_value_per_day"),
      ).toBe(true);
      const spent = await rt.store.db
        .selectFrom("transactions")
        .select("value")
        .where("from_address", "=", wallet.address)
        .where("state", "!=", "failed")
        .execute();
      expect(spent.reduce((sum, r) => sum + BigInt(r.value), 0n)).toBe(parseEther("0.9"));
      const denied = (
        (await get(rt, admin, `/audit?wallet_id=${wallet.id}&decision=denied`)).json as {
          entries: AuditRow[];
        }
      ).entries;
      expect(denied).toHaveLength(14);
    } finally {
      await second?.close();
    }
  });

  it("a wallet's 1 ETH day holds over all its addresses and chains at once (one instance, or two on one PostgreSQL)", async () => {
    const made = await rt.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 2 },
      bearer(alice),
    );
    const records = made.json as { id: string; address: `0x${string}` }[];
    const walletId = records[0]!.id;
    expect(
      (await rt.post(`/wallet/${walletId}/unattended`, { password: PASSWORD }, bearer(admin))).status,
    ).toBe(200);
    await policy({
      name: "wallet day",
      wallet_id: walletId,
      rules: { max_value_per_day: parseEther("1").toString() },
    });
    const second = await secondInstance();
    try {
      // 2 addresses x 2 chains x 6 sends of 0.15 ETH: six fit in the wallet's 1 ETH, wherever they come from.
      const answers = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const from = records[i % 2]!.address;
          const chain = (i >> 1) % 2 === 0 ? 1001 : 1002;
          const instance = i % 3 === 2 && second && chain === 1001 ? second : rt;
          const { json } = await instance.post(
            `/?chain_id=${chain}`,
            {
              jsonrpc: "2.0",
              id: i,
              method: "eth_sendTransaction",
              params: [{ from, to: ALLOWED, value: toHex(parseEther("0.15")) }],
            },
            bearer(alice),
          );
          return json as Envelope;
        }),
      );
      const sent = answers.filter((a) => a.error === undefined);
      expect(sent).toHaveLength(6);
      for (const refused of answers.filter((a) => a.error !== undefined)) {
        expect(refused.error).toMatchObject({ code: -32003, data: { rule: "max_value_per_day" } });
        expect(refused.error?.message).toContain("all its addresses, all chains");
      }
      const moved = await rt.store.db
        .selectFrom("transactions")
        .select("value")
        .where("wallet_id", "=", walletId)
        .where("state", "!=", "failed")
        .execute();
      expect(moved.reduce((sum, r) => sum + BigInt(r.value), 0n)).toBe(parseEther("0.9"));
    } finally {
      await second?.close();
    }
  });

  it("the CLI creates, lists and deletes policies in the same store; key and policy changes are audited", async () => {
    const wallet = await unattendedWallet();
    const made = JSON.parse(
      await cli(rt, store, [
        "create",
        "--name",
        "from the CLI",
        "--wallet",
        wallet.id,
        "--rules",
        '{"message_signing":false}',
      ]),
    ) as { id: string };
    const refused = await rpc(rt, alice, "personal_sign", ["0x01", wallet.address]);
    expect(refused.error).toMatchObject({
      code: -32003,
      data: { rule: "message_signing", policy_id: made.id },
    });
    expect(await cli(rt, store, ["list"])).toContain(made.id);
    await expect(
      cli(rt, store, ["create", "--name", "bad", "--wallet", wallet.id, "--rules", '{"max_gas":1}']),
    ).rejects.toThrow(/rules are not valid/);
    await cli(rt, store, ["delete", made.id]);
    expect((await rpc(rt, alice, "personal_sign", ["0x01", wallet.address])).error).toBeUndefined();
    const changes = (
      (await get(rt, admin, "/audit?decision=change&limit=1000")).json as { entries: AuditRow[] }
    ).entries;
    const ofPolicy = changes.filter((e) => e.policy_id === made.id).map((e) => e.operation);
    expect(ofPolicy.sort()).toEqual(["policy.create", "policy.delete"]);
    expect(changes.filter((e) => e.operation === "key.create")).toHaveLength(3);
  });
});
