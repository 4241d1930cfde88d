/** POST /transaction on the fast path answers what the full path answers (statuses, headers, problem bodies), and hands on everything it does not take. */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { keysMade } from "../test-support/keys.js";
import { raw } from "../test-support/raw-request.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "fast-path-password";
const json = { "content-type": "application/json" };

async function metric(rt: TestRuntime, name: string, key?: string): Promise<number> {
  const answer = await fetch(`${rt.url}/metrics`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  expect(answer.status).toBe(200);
  const line = (await answer.text()).split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}
const fastAnswers = (rt: TestRuntime, key?: string) =>
  metric(rt, "chaingate_http_fast_path_answers_total", key);

/**
 * The same request on the fast path (`/transaction`) and on the full path (`/transaction?via=full`:
 * Fastify routes it alike, and the fast path never takes a query string).
 */
async function bothWays(rt: TestRuntime, headers: Record<string, string>, body: string, key?: string) {
  const before = await fastAnswers(rt, key);
  const fast = await raw(rt.url, "/transaction", "POST", headers, body);
  const taken = (await fastAnswers(rt, key)) - before;
  const full = await raw(rt.url, "/transaction?via=full", "POST", headers, body);
  expect((await fastAnswers(rt, key)) - before - taken, "the full path is not counted as fast").toBe(0);
  return { fast, full, taken };
}

describe("POST /transaction on the fast path", () => {
  let rt: TestRuntime;
  let walletId: string;
  let address: string;
  const logLines: string[] = [];
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_LOG_REQUESTS: "true" }, logLines });
    const made = await rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    ({ id: walletId, address } = (made.json as { id: string; address: string }[])[0]!);
  });
  afterAll(async () => rt?.close());

  const transfer = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      wallet_id: walletId,
      password: PASSWORD,
      transaction: { to: DEV_ACCOUNT_2, value: "1" },
      ...extra,
    });

  it("signs and sends, answering the hash with the full path's status and headers, counted and logged", async () => {
    const { fast, full, taken } = await bothWays(rt, { ...json, "x-request-id": "tx-fast-1" }, transfer());
    expect(taken).toBe(1);
    expect(fast.status, fast.text).toBe(200);
    expect(full.status, full.text).toBe(200);
    const hash = (JSON.parse(fast.text) as { tx_hash: string }).tx_hash;
    expect(fast.text).toBe(JSON.stringify({ tx_hash: hash }));
    expect(Object.keys(JSON.parse(full.text) as object)).toEqual(["tx_hash"]);
    expect(fast.headers["content-type"]).toBe(full.headers["content-type"]);
    expect(fast.headers["content-length"]).toBe(String(Buffer.byteLength(fast.text)));
    expect(fast.headers["x-request-id"]).toBe("tx-fast-1");
    // Signed, sent and followed like any other: the node has it, and it is mined.
    expect(await nodeCall(rt.url, "eth_getTransactionByHash", [hash])).not.toBeNull();
    expect(
      await waitUntil(
        async () => (await nodeCall(rt.url, "eth_getTransactionReceipt", [hash])) !== null,
        30_000,
      ),
    ).toBe(true);
    const line = await waitUntil(async () => logLines.some((l) => l.includes('"reqId":"tx-fast-1"')), 10_000);
    expect(line, "the access log has the fast path's line").toBe(true);
    const logged = JSON.parse(logLines.find((l) => l.includes('"reqId":"tx-fast-1"'))!) as {
      req: { method: string; url: string };
      res: { statusCode: number };
    };
    expect(logged.req).toMatchObject({ method: "POST", url: "/transaction" });
    expect(logged.res.statusCode).toBe(200);
  });

  it("answers the service's refusals with the full path's problem, byte for byte", async () => {
    const cases = [
      transfer({ password: "not-the-password" }),
      transfer({ wallet_id: "00000000-0000-4000-8000-000000000000" }),
      transfer({ transaction: { to: "0x12", value: "1" } }),
      transfer({ transaction: { to: DEV_ACCOUNT_2, value: "-1" } }),
      transfer({ chain_id: 999_999 }),
      transfer({ index: 7 }),
      transfer({ transaction: { data: "0x" } }),
    ];
    for (const body of cases) {
      const { fast, full, taken } = await bothWays(rt, json, body);
      expect(taken, body).toBe(1);
      expect(fast.status, fast.text).toBeGreaterThanOrEqual(400);
      expect(fast.status, body).toBe(full.status);
      expect(fast.text, body).toBe(full.text);
      expect(fast.headers["content-type"]).toBe(full.headers["content-type"]);
    }
  });

  it("hands on what it does not take, with its body, to the same refusal", async () => {
    const cases: [Record<string, string>, string][] = [
      [json, JSON.stringify({ wallet_id: walletId, password: PASSWORD })],
      [json, "{not json"],
      [json, transfer({ extra: true })],
      [json, '{"__proto__":{"x":1},"transaction":{}}'],
      [{ "content-type": "text/plain" }, transfer()],
      [json, transfer({ wait_ms: "soon" })],
    ];
    for (const [headers, body] of cases) {
      const { fast, full, taken } = await bothWays(rt, headers, body);
      expect(taken, body).toBe(0);
      expect(fast.status, body).toBe(full.status);
      expect(fast.text, body).toBe(full.text);
    }
  });

  it("any body answers as the full path answers it (property)", async () => {
    const field = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 8 }),
      fc.integer({ min: -2, max: 2 }),
      fc.constant(null),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          wallet_id: fc.oneof(fc.constant(walletId), field),
          password: fc.oneof(fc.constant(PASSWORD), field),
          index: fc.oneof(fc.constant(0), field),
          to: fc.oneof(fc.constant(DEV_ACCOUNT_2), field),
          value: fc.oneof(fc.constant("0"), field),
        }),
        async ({ to, value, ...top }) => {
          const body = JSON.stringify({ ...top, transaction: { to, value } });
          const { fast, full } = await bothWays(rt, json, body);
          expect(fast.status, body).toBe(full.status);
          if (fast.status === 200) expect(Object.keys(JSON.parse(fast.text) as object)).toEqual(["tx_hash"]);
          else expect(fast.text, body).toBe(full.text);
        },
      ),
      { numRuns: 40 },
    );
    // Every one of them was followed: the address's records and the chain agree.
    const sent = Number(await nodeCall(rt.url, "eth_getTransactionCount", [address, "pending"]));
    expect(sent).toBeGreaterThan(0);
  });
});

describe("eth_sendTransaction on POST / through the fast path", () => {
  let rt: TestRuntime;
  let address: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_LOG_REQUESTS: "false" } });
    const made = await rt.post("/wallet", { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 });
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    address = (made.json as { address: string }[])[0]!.address;
  });
  afterAll(async () => rt?.close());

  const send = (id: number, params: unknown[]) =>
    JSON.stringify({ jsonrpc: "2.0", id, method: "eth_sendTransaction", params });
  /** The same call on `POST /` (the fast path) and on `POST /?chain_id=1001` (the JSON-RPC route). */
  async function bothWays(body: string, headers: Record<string, string> = {}) {
    const before = await fastAnswers(rt);
    const fast = await raw(rt.url, "/", "POST", { ...json, ...headers }, body);
    const taken = (await fastAnswers(rt)) - before;
    const full = await raw(rt.url, "/?chain_id=1001", "POST", { ...json, ...headers }, body);
    return { fast, full, taken };
  }

  it("a locked address is refused alike; unlocked, the send is signed, recorded and mined, once per Idempotency-Key", async () => {
    const tx = { from: address, to: DEV_ACCOUNT_2, value: "0x1" };
    const locked = await bothWays(send(1, [tx]));
    expect(locked.taken).toBe(1);
    expect(locked.fast.text).toContain('"error"');
    expect(locked.fast.text).toBe(locked.full.text);
    const unlock = await rt.post("/", {
      jsonrpc: "2.0",
      id: 2,
      method: "personal_unlockAccount",
      params: [address, PASSWORD, 600],
    });
    expect((unlock.json as { result: unknown }).result).toBe(true);
    const sent = await bothWays(send(3, [tx]));
    expect(sent.taken).toBe(1);
    const hash = (JSON.parse(sent.fast.text) as { id: number; result: string }).result;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Object.keys(JSON.parse(sent.full.text) as object)).toEqual(
      Object.keys(JSON.parse(sent.fast.text) as object),
    );
    expect(
      await waitUntil(
        async () => (await nodeCall(rt.url, "eth_getTransactionReceipt", [hash])) !== null,
        30_000,
      ),
    ).toBe(true);
    // The Idempotency-Key is the full path's: the same key answers the first hash, nothing new signed.
    const keyed = { "idempotency-key": "fast-send-1" };
    const first = await raw(rt.url, "/", "POST", { ...json, ...keyed }, send(4, [tx]));
    const again = await raw(rt.url, "/", "POST", { ...json, ...keyed }, send(4, [tx]));
    expect(JSON.parse(again.text)).toEqual(JSON.parse(first.text));
    const nonce = Number(await nodeCall(rt.url, "eth_getTransactionCount", [address, "pending"]));
    expect(nonce).toBe(3);
  });
});

describe("POST /transaction on the fast path with API keys", () => {
  let rt: TestRuntime;
  let keys: { alice: string; bob: string; ops: string };
  let walletId: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_LOG_REQUESTS: "false" } });
    keys = await keysMade(rt, { alice: "user", bob: "user", ops: "admin" });
    const made = await rt.post(
      "/wallet",
      { type: "KEYSTORE_V3", password: PASSWORD, address_quantity: 1 },
      { authorization: `Bearer ${keys.alice}` },
    );
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    walletId = (made.json as { id: string }[])[0]!.id;
  }, 120_000);
  afterAll(async () => rt?.close());

  const body = () =>
    JSON.stringify({
      wallet_id: walletId,
      password: PASSWORD,
      transaction: { to: DEV_ACCOUNT_2, value: "1" },
    });

  it("signs for the key that owns the wallet, refuses another key's, and hands on a missing or unknown key", async () => {
    const as = (key: string) => ({ ...json, authorization: `Bearer ${key}` });
    const own = await bothWays(rt, as(keys.alice), body(), keys.ops);
    expect(own.taken).toBe(1);
    expect([own.fast.status, own.full.status]).toEqual([200, 200]);
    const other = await bothWays(rt, as(keys.bob), body(), keys.ops);
    expect(other.taken).toBe(1);
    expect(other.fast.status).toBe(404);
    expect(other.fast.text).toBe(other.full.text);
    for (const headers of [json, as("cg_not_a_key")]) {
      const refused = await bothWays(rt, headers, body(), keys.ops);
      expect(refused.taken).toBe(0);
      expect(refused.fast.status).toBe(401);
      expect(refused.fast.text).toBe(refused.full.text);
      expect(refused.fast.headers["www-authenticate"]).toBe(refused.full.headers["www-authenticate"]);
    }
  });
});
