import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const PASSWORD = "tenant-password";

/** Runs the real CLI's `keys` command against the test's store. */
async function keysCli(args: string[], dataDir: string, store: TempStore): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", MAIN, "keys", ...args, "--data-dir", dataDir],
    { env: { ...process.env, ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}) } },
  );
  return stdout.trim();
}

describeEachStore("API keys and tenancy", (target) => {
  let store: TempStore;
  let rt: TestRuntime;
  let admin: string;
  let alice: { id: string; key: string };
  let bob: string;
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    store = await tempStore(target);
    rt = await startTestRuntime({ store });
    admin = (
      JSON.parse(await keysCli(["create", "--role", "admin", "--name", "ops"], rt.dataDir, store)) as {
        key: string;
      }
    ).key;
    alice = JSON.parse(await keysCli(["create", "--role", "user", "--name", "alice"], rt.dataDir, store)) as {
      id: string;
      key: string;
    };
    bob = (JSON.parse(await keysCli(["create", "--role=user"], rt.dataDir, store)) as { key: string }).key;
  }, 60_000);
  afterAll(async () => {
    await rt?.close();
    await store?.drop();
  });

  it("keys are listed without their secret, and stored only as hashes", async () => {
    const listed = (await keysCli(["list"], rt.dataDir, store)).split("\n").map((line) => JSON.parse(line));
    expect(listed.map((k: { role: string }) => k.role).sort()).toEqual(["admin", "user", "user"]);
    expect(JSON.stringify(listed)).not.toContain(alice.key);
    const rows = await rt.store.db.selectFrom("api_keys").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(alice.key);
  });

  it("without a key, or with an unknown one, nothing but health and docs answers", async () => {
    for (const [path, body] of [
      ["/eth_blockNumber", undefined],
      ["/", { jsonrpc: "2.0", id: 1, method: "eth_chainId" }],
      ["/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 }],
      ["/list_all_members", {}],
    ] as const) {
      const missing = await rt.post(path, body);
      expect(missing.status, path).toBe(401);
      expect(missing.json).toMatchObject({ code: "API_KEY_REQUIRED", status: 401 });
      const wrong = await rt.post(path, body, auth("cg_not-a-key"));
      expect(wrong.status, path).toBe(401);
      expect(wrong.json).toMatchObject({ code: "API_KEY_INVALID" });
    }
    expect((await fetch(`${rt.url}/wallet`)).status).toBe(401);
    expect((await fetch(`${rt.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${rt.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${rt.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${rt.url}/docs`)).status).toBeLessThan(400);
    expect((await rt.post("/eth_blockNumber", undefined, auth(bob))).status).toBe(200);
    // /metrics counts every tenant's traffic and names the upstreams: admins only.
    const metricsAsUser = await fetch(`${rt.url}/metrics`, { headers: auth(bob) });
    expect(metricsAsUser.status).toBe(403);
    expect(((await metricsAsUser.json()) as { code: string }).code).toBe("ADMIN_REQUIRED");
    const metricsAsAdmin = await fetch(`${rt.url}/metrics`, { headers: auth(admin) });
    expect(metricsAsAdmin.status).toBe(200);
    expect(await metricsAsAdmin.text()).toContain("chaingate_http_requests_total");
    // Nothing was created by the refused requests.
    expect(await rt.store.db.selectFrom("wallets").select("id").execute()).toHaveLength(0);
  });

  it("a wallet belongs to the key that made it: other tenants neither see it nor use it", async () => {
    const created = await rt.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
      auth(alice.key),
    );
    const [wallet] = created.json as { id: string }[];
    const id = wallet!.id;

    const own = await fetch(`${rt.url}/wallet`, { headers: auth(alice.key) });
    expect(((await own.json()) as { id: string }[]).map((w) => w.id)).toContain(id);
    const other = await fetch(`${rt.url}/wallet`, { headers: auth(bob) });
    expect(((await other.json()) as { id: string }[]).map((w) => w.id)).not.toContain(id);
    expect((await fetch(`${rt.url}/wallet/${id}`, { headers: auth(bob) })).status).toBe(404);
    expect((await fetch(`${rt.url}/wallet/${id}`, { headers: auth(admin) })).status).toBe(404);

    const tx = { wallet_id: id, password: PASSWORD, transaction: { to: DEV_ACCOUNT_2, value: "1" } };
    const stolen = await rt.post("/transaction", tx, auth(bob));
    expect(stolen.status).toBe(404);
    expect(stolen.json).toMatchObject({ code: "WALLET_NOT_FOUND" });
    const token = await rt.post(
      "/create_new_ERC20_token",
      { wallet_id: id, password: PASSWORD, name: "T", symbol: "T", initial_supply: 1 },
      auth(bob),
    );
    expect((token.json as { error: { code: number } }).error.code).toBe(-32004);

    const mine = await rt.post("/transaction", tx, auth(alice.key));
    expect(mine.status).toBe(200);
    const transfers = async (key: string) =>
      (
        (await rt.post("/list_all_transfers", {}, auth(key))).json as {
          result: { transfers: { wallet_id: string }[] };
        }
      ).result.transfers;
    expect((await transfers(alice.key)).map((t) => t.wallet_id)).toEqual([id]);
    expect(await transfers(bob)).toEqual([]);
  });

  it("member registration needs the admin role", async () => {
    const member = { name: "Tenancy Peer", chain_id: 1002, role: "ISSUER" };
    const refused = await rt.post("/register_new_member", member, auth(bob));
    expect((refused.json as { error: { data: { code: string } } }).error.data.code).toBe("ADMIN_REQUIRED");
    const done = await rt.post("/register_new_member", member, auth(admin));
    expect((done.json as { result: { name: string } }).result.name).toBe("Tenancy Peer");
  });

  it("a revoked key reaches nothing (within the key ring's one-second refresh)", async () => {
    expect((await rt.post("/eth_chainId", undefined, auth(alice.key))).status).toBe(200);
    await keysCli(["revoke", alice.id], rt.dataDir, store);
    // The ring refreshes every second; a busy machine may take longer, so wait for it (bounded).
    let after = await rt.post("/eth_chainId", undefined, auth(alice.key));
    for (const deadline = Date.now() + 30_000; after.status !== 401 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 100));
      after = await rt.post("/eth_chainId", undefined, auth(alice.key));
    }
    expect(after.status).toBe(401);
    expect(after.json).toMatchObject({ code: "API_KEY_INVALID" });
  });
});

describe("rate limits", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_RATE_READ: "5/h", CHAINGATE_RATE_WALLETS: "2/h" } });

  it("answers 429 with Retry-After once a group's budget is spent; other groups are unaffected", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await rt.post("/eth_chainId")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await fetch(`${rt.url}/eth_chainId`, { method: "POST" });
    expect(limited.status).toBe(429);
    // One token comes back every 12 minutes.
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(600);
    expect(await limited.json()).toMatchObject({ code: "RATE_LIMITED", status: 429, retryable: true });

    const wallet = { type: "KEYSTORE_V3", password: "pw", address_quantity: 1 };
    const created = [
      await rt.post("/wallet", wallet),
      await rt.post("/wallet", wallet),
      await rt.post("/wallet", wallet),
    ];
    expect(created.map((c) => c.status)).toEqual([200, 200, 429]);
    expect(await rt.store.db.selectFrom("wallets").select("id").execute()).toHaveLength(2);
  });
});

describe("method policy", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_DENY_METHODS: "eth_sendTransaction,eth_sign*" } });

  it("refuses denied methods on Native paths and in batches, and serves the rest", async () => {
    const denied = await rt.post("/eth_sendTransaction", {
      params: [{ from: DEV_ACCOUNT_2, to: DEV_ACCOUNT_2 }],
    });
    expect(denied.json).toMatchObject({ error: { code: -32013, data: { code: "METHOD_DENIED" } } });
    const batch = await rt.post("/", [
      { jsonrpc: "2.0", id: 1, method: "eth_sign", params: [DEV_ACCOUNT_2, "0x00"] },
      { jsonrpc: "2.0", id: 2, method: "eth_chainId" },
    ]);
    const answers = batch.json as { id: number; error?: { code: number }; result?: string }[];
    expect(answers.find((a) => a.id === 1)?.error?.code).toBe(-32013);
    expect(answers.find((a) => a.id === 2)?.result).toBe("0x3e9");
  });
});

describe("listening beyond loopback", () => {
  it("refuses to start on 0.0.0.0 with no keys, unless --insecure", async () => {
    await expect(startTestRuntime({ env: { HOST: "0.0.0.0" } })).rejects.toThrow(
      /refusing to listen on 0.0.0.0/,
    );
    const rt = await startTestRuntime({ env: { HOST: "0.0.0.0", CHAINGATE_INSECURE: "true" } });
    await rt.close();
  }, 60_000);
});
