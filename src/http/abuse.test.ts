import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyStore } from "../auth/api-keys.js";
import { CHUNK_BLOCKS } from "../filters/log-query.js";
import { connect, floodLogs, LOGS_PER_CALL, peakRss } from "../test-support/abuse-helpers.js";
import { mine, native, result } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { keysInForce } from "../test-support/keys.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

/** POSTs a JSON-RPC batch to / and answers the parsed answers and the answer's size in bytes. */
async function batch(rt: TestRuntime, calls: { method: string; params: unknown[] }[], key?: string) {
  const response = await fetch(`${rt.url}/`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(calls.map((c, i) => ({ jsonrpc: "2.0", id: i + 1, ...c }))),
  });
  const text = await response.text();
  return {
    bytes: text.length,
    answers: JSON.parse(text) as {
      result?: unknown;
      error?: { code: number; message: string; data?: { code?: string } };
    }[],
  };
}

describe("a hostile tenant: eth_getLogs", () => {
  let rt: TestRuntime;
  /** The flood calls' blocks, in order (the head may have moved past the last one since). */
  let flood: number[];
  const hex = (n: number) => `0x${n.toString(16)}`;
  beforeAll(async () => {
    rt = await startTestRuntime();
    // 20,480 logs on the chain.
    flood = await floodLogs(rt, 20);
  }, 180_000);
  afterAll(async () => rt?.close());

  it("a batch of 50 full-range eth_getLogs over 20,480 logs is refused with the documented error, memory bounded", async () => {
    const calls = Array.from({ length: 50 }, () => ({
      method: "eth_getLogs",
      params: [{ fromBlock: "0x0", toBlock: "latest" }],
    }));
    const { value, peakMb } = await peakRss(() => batch(rt, calls));
    process.stdout.write(`abuse getLogs: answer ${value.bytes} bytes, peak RSS ${peakMb} MB\n`);
    expect(value.answers).toHaveLength(50);
    for (const answer of value.answers) {
      expect(answer.error?.code).toBe(-32005);
      expect(answer.error?.message).toMatch(/query returned more than 10000 results/);
      expect(answer.error?.data?.code).toBe("TOO_MANY_RESULTS");
    }
    expect(value.bytes).toBeLessThan(100 * 1024 * 1024);
    expect(peakMb).toBeLessThan(700);
    // Inside the caps the same query answers in full (a narrower one: one flood call's logs).
    const last = flood[flood.length - 1]!;
    const one = await result<unknown[]>(rt, "eth_getLogs", [{ fromBlock: hex(last), toBlock: "latest" }]);
    expect(one).toHaveLength(LOGS_PER_CALL);
  });

  it("batches of eth_getLogs each within the caps: what a key holds and is given per second is bounded", async () => {
    // Four 8 KB batches at once, every call distinct (no sharing, no cache): 9 flood blocks each.
    const calls = (seed: number) =>
      Array.from({ length: 27 }, (_, i) => ({
        method: "eth_getLogs",
        params: [
          {
            fromBlock: hex(flood[i % 12]!),
            toBlock: hex(flood[(i % 12) + 8]!),
            topics: [
              [`0x${"ab".padStart(64, "0")}`, `0x${(seed * 1000 + i).toString(16).padStart(64, "0")}`],
            ],
          },
        ],
      }));
    const { value, peakMb } = await peakRss(() =>
      Promise.all([1, 2, 3, 4].map((seed) => batch(rt, calls(seed)))),
    );
    const answers = value.flatMap((v) => v.answers);
    const bytes = value.reduce((sum, v) => sum + v.bytes, 0);
    process.stdout.write(`abuse getLogs batches: ${bytes} bytes answered, peak RSS ${peakMb} MB\n`);
    const answered = answers.filter((a) => a.result !== undefined);
    const refused = answers.filter((a) => a.error !== undefined);
    expect(answered.length).toBeGreaterThan(0);
    for (const a of answered) expect((a.result as unknown[]).length).toBe(9 * LOGS_PER_CALL);
    for (const a of refused)
      expect(["ANSWERS_IN_FLIGHT", "RESPONSE_TOO_LARGE"]).toContain(a.error?.data?.code);
    // Which of the key's two bounds refuses first depends on how the four batches interleave (on a
    // slow machine they all hold their answers at once): either is this key's refusal, never another's.
    const busy = refused.filter((a) => a.error?.data?.code === "ANSWERS_IN_FLIGHT");
    expect(busy.length).toBeGreaterThan(0);
    for (const a of busy)
      expect(a.error?.message).toMatch(
        /MiB a second of large reads lately; retry in \d+ s|this key's requests already hold \d+ MiB of answers not yet read/,
      );
    // A small answer is not held back by the large reads' budget: the key still reads the head
    // (it was refused for a second after a flood, and the next test's first call failed on it).
    expect((await native(rt, "eth_blockNumber", [])).error).toBeUndefined();
    expect((await native(rt, "eth_getBalance", [DEV_ACCOUNT_2, "latest"])).error).toBeUndefined();
    // Unbounded, the four batches answered 255 MiB (and held it at once); now a fraction of that.
    expect(bytes).toBeLessThan(100 * 1_048_576);
    expect(peakMb).toBeLessThan(700);
    // Once the key's large reads are paid for, it is answered again.
    expect(
      await waitUntil(async () => {
        const last = hex(flood[flood.length - 1]!);
        const again = await native(rt, "eth_getLogs", [{ fromBlock: last, toBlock: last }]);
        return again.error === undefined;
      }, 30_000),
    ).toBe(true);
  });

  it("a range wider than the cap is refused; one inside it is fetched in chunks and merged", async () => {
    // More blocks than one chunk: such a range is fetched chunk by chunk.
    const before = Number(await result<string>(rt, "eth_blockNumber"));
    await mine(rt, CHUNK_BLOCKS + 500);
    const head = Number(await result<string>(rt, "eth_blockNumber"));
    // Empty blocks across two chunks, and the flood's logs counted across chunks against the cap.
    expect(
      await result<unknown[]>(rt, "eth_getLogs", [{ fromBlock: hex(before + 1), toBlock: hex(head) }]),
    ).toEqual([]);
    const over = await native(rt, "eth_getLogs", [{ fromBlock: "0x0", toBlock: hex(head) }]);
    expect(over.error?.message).toMatch(/query returned more than 10000 results/);
    // The last five flood calls' blocks, then every block since.
    const logs = await result<{ blockNumber: string }[]>(rt, "eth_getLogs", [
      { fromBlock: hex(flood[flood.length - 5]!), toBlock: hex(head) },
    ]);
    expect(logs).toHaveLength(5 * LOGS_PER_CALL);
    const numbers = logs.map((l) => Number(l.blockNumber));
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));
    // Wider than the cap (10,000 blocks by default): refused before any node is asked.
    const wide = await native(rt, "eth_getLogs", [{ fromBlock: "0x0", toBlock: hex(head + 10_000) }]);
    expect(wide.error?.code).toBe(-32005);
    expect(wide.error?.message).toMatch(/block range is too large: \d+ blocks; at most 10000/);
  }, 120_000);

  it("a filter or subscription naming more addresses than the cap is refused", async () => {
    const addresses = Array.from({ length: 22_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
    const filter = await native(rt, "eth_newFilter", [{ address: addresses }]);
    expect(filter.error?.code).toBe(-32005);
    expect(filter.error?.message).toMatch(/22000 addresses; at most 1000/);
    const client = await connect(rt);
    const sub = await client.call("eth_subscribe", ["logs", { address: addresses.slice(0, 1001) }]);
    expect(sub.error?.code).toBe(-32005);
    client.socket.close();
  });
});

describe("a hostile tenant: filters, subscriptions, sockets and revocation (API keys)", () => {
  let rt: TestRuntime;
  let alice: string;
  let aliceId: string;
  let bob: string;
  beforeAll(async () => {
    rt = await startTestRuntime({
      env: { CHAINGATE_MAX_SOCKETS_PER_KEY: "12", CHAINGATE_MAX_SUBSCRIPTIONS_PER_KEY: "1000" },
    });
    const keys = new ApiKeyStore(rt.store);
    ({ key: alice, id: aliceId } = await keys.create("user", "alice"));
    ({ key: bob } = await keys.create("user", "bob"));
    await keysInForce(rt, [alice, bob]);
  });
  afterAll(async () => rt?.close());

  it("one key cannot hold more than 1,000 filters; another key's filter is 'filter not found' to poll and to uninstall", async () => {
    for (let round = 0; round < 10; round++) {
      const { answers } = await batch(
        rt,
        Array.from({ length: 100 }, () => ({ method: "eth_newBlockFilter", params: [] })),
        alice,
      );
      expect(
        answers.every((a) => typeof a.result === "string"),
        JSON.stringify(answers[0]),
      ).toBe(true);
    }
    const over = await batch(rt, [{ method: "eth_newBlockFilter", params: [] }], alice);
    expect(over.answers[0]?.error?.code).toBe(-32005);
    expect(over.answers[0]?.error?.data?.code).toBe("FILTER_LIMIT");
    // Bob is not affected by Alice's quota, and cannot touch her filters.
    const bobs = await batch(rt, [{ method: "eth_newBlockFilter", params: [] }], bob);
    expect(typeof bobs.answers[0]?.result).toBe("string");
    const [aliceFilter] = (await batch(rt, [{ method: "eth_newFilter", params: [{}] }], bob)).answers.map(
      (a) => a.result as string,
    );
    expect(aliceFilter).toBeDefined();
    const aliceOwn = (await batch(rt, [{ method: "eth_getFilterChanges", params: [aliceFilter] }], bob))
      .answers[0];
    expect(aliceOwn?.result).toEqual([]);
    const stolen = (await batch(rt, [{ method: "eth_getFilterChanges", params: [aliceFilter] }], alice))
      .answers[0];
    expect(stolen?.error?.message).toBe("filter not found");
    const removed = (await batch(rt, [{ method: "eth_uninstallFilter", params: [aliceFilter] }], alice))
      .answers[0];
    expect(removed?.result).toBe(false);
    expect(
      (await batch(rt, [{ method: "eth_getFilterChanges", params: [aliceFilter] }], bob)).answers[0]?.result,
    ).toEqual([]);
  });

  it("one key cannot hold more than 1,000 subscriptions nor more sockets than its cap; dropping them all does not stall others", async () => {
    const clients = [];
    for (let i = 0; i < 11; i++) clients.push(await connect(rt, alice));
    let refused: { code: number; data?: unknown } | undefined;
    let held = 0;
    for (const client of clients) {
      for (let j = 0; j < 100 && refused === undefined; j++) {
        const answer = await client.call("eth_subscribe", ["newHeads"]);
        if (answer.error) refused = answer.error;
        else held++;
      }
    }
    expect(held).toBe(1000);
    expect(refused).toMatchObject({ code: -32005, data: { code: "SUBSCRIPTION_LIMIT" } });
    // Sockets: 11 open, the 12th is the cap; the 13th is refused before the upgrade.
    clients.push(await connect(rt, alice));
    await expect(connect(rt, alice)).rejects.toThrow("HTTP 429");
    // Bob connects and subscribes as usual meanwhile.
    const other = await connect(rt, bob);
    expect((await other.call("eth_subscribe", ["newHeads"])).result).toBeTypeOf("string");
    // Alice drops every socket at once; Bob's calls are answered meanwhile.
    const started = Date.now();
    const probe = (async () => {
      const seen: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t = Date.now();
        await other.call("eth_chainId");
        seen.push(Date.now() - t);
      }
      return Math.max(...seen);
    })();
    for (const client of clients) client.socket.terminate();
    const worst = await probe;
    process.stdout.write(
      `abuse: dropping 1,000 subscriptions on 12 sockets; another tenant's slowest call ${worst} ms\n`,
    );
    expect(worst).toBeLessThan(1000);
    expect(await waitUntil(() => rt.app.websocketServer.clients.size === 1, 10_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(60_000);
    other.socket.close();
  });

  it("revoking a key closes its open WebSockets within seconds", async () => {
    const client = await connect(rt, alice);
    expect((await client.call("eth_chainId")).result).toBe("0x3e9");
    const revokedAt = Date.now();
    await new ApiKeyStore(rt.store).revoke(aliceId);
    const code = await Promise.race([
      client.closed,
      new Promise<number>((r) => setTimeout(() => r(-1), 5_000)),
    ]);
    process.stdout.write(`abuse: a revoked key's socket closed after ${Date.now() - revokedAt} ms\n`);
    expect(code).toBe(1008);
  });
});

describe("a hostile tenant: requests held open", () => {
  let rt: TestRuntime;
  let key: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_MAX_CONCURRENT_PER_KEY: "3" } });
    key = (await new ApiKeyStore(rt.store).create("user", "slowloris")).key;
    await keysInForce(rt, [key]);
  });
  afterAll(async () => rt?.close());

  it("a key holding its cap of requests in flight is told to wait; each one that ends frees its place", async () => {
    const { connect: tcp } = await import("node:net");
    const port = Number(new URL(rt.url).port);
    // Five bodies that never arrive: three are held in flight (the cap), two are refused at once.
    let refusedRaw = 0;
    const held = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const socket = tcp(port, "127.0.0.1");
        await new Promise((r) => socket.once("connect", r));
        socket.on("data", (data: Buffer) => {
          if (data.toString().startsWith("HTTP/1.1 429") && data.toString().includes("CONCURRENCY_LIMIT"))
            refusedRaw++;
        });
        socket.write(
          `POST /eth_chainId HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
        );
        return socket;
      }),
    );
    expect(await waitUntil(() => refusedRaw === 2, 10_000)).toBe(true);
    const auth = { authorization: `Bearer ${key}` };
    const refused = await rt.post("/eth_chainId", undefined, auth);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: "CONCURRENCY_LIMIT", retryable: true });
    for (const socket of held) socket.destroy();
    expect(
      await waitUntil(async () => (await rt.post("/eth_chainId", undefined, auth)).status === 200, 10_000),
    ).toBe(true);
  });
});
