import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "../test-support/cli.js";
import { keysMade } from "../test-support/keys.js";
import { raw } from "../test-support/raw-request.js";
import { startTestRuntime, suiteRuntime, type TestRuntime } from "../test-support/test-runtime.js";

/** A POST with exactly the headers given. */
const post = (url: string, path: string, headers: Record<string, string>, body: string) =>
  raw(url, path, "POST", headers, body);

async function metric(rt: TestRuntime, name: string, labels = "", key?: string): Promise<number> {
  const answer = await fetch(`${rt.url}/metrics`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  expect(answer.status).toBe(200);
  const text = await answer.text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}

const fastAnswers = (rt: TestRuntime, key?: string) =>
  metric(rt, "chaingate_http_fast_path_answers_total", "", key);
const call = (method: string, params: unknown[], id: unknown = 1) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });
const json = { "content-type": "application/json" };

describe("node reads on POST / with request logging off", () => {
  let rt: TestRuntime;
  let blockHash: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_LOG_REQUESTS: "false" } });
    const block = await rt.post("/", {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBlockByNumber",
      params: ["0x0", false],
    });
    blockHash = (block.json as { result: { hash: string } }).result.hash;
  });
  afterAll(async () => rt?.close());

  it("answers a cached read itself, with the full path's bytes and headers; other calls are handed on with their body", async () => {
    const body = call("eth_getBlockByHash", [blockHash, false], 7);
    // Through the full path (a query string is never taken by the fast path): fetches and caches.
    const full = await post(rt.url, "/?chain_id=1001", json, body);
    const before = await fastAnswers(rt);
    const hitsBefore = await metric(
      rt,
      "chaingate_rpc_calls_total",
      '{method="eth_getBlockByHash",outcome="ok"}',
    );
    const fast = await post(rt.url, "/", { ...json, "x-request-id": "trace-1" }, body);
    expect(await fastAnswers(rt)).toBe(before + 1);
    expect(fast.status).toBe(200);
    expect(fast.text).toBe(full.text);
    expect(fast.headers["content-type"]).toBe(full.headers["content-type"]);
    expect(fast.headers["content-length"]).toBe(String(Buffer.byteLength(fast.text)));
    // A caller's request id is echoed, as Fastify does; without one a fresh id is made.
    expect(fast.headers["x-request-id"]).toBe("trace-1");
    const other = await post(rt.url, "/", json, body);
    expect(other.headers["x-request-id"]).toMatch(/^[0-9a-f]{12}-\d+$/);
    // Made the same way on both paths (one prefix a process), each fresh.
    expect(other.headers["x-request-id"]!.slice(0, 13)).toBe(full.headers["x-request-id"]!.slice(0, 13));
    expect(other.headers["x-request-id"]).not.toBe(full.headers["x-request-id"]);
    // Counted as the full path counts a call.
    expect(await metric(rt, "chaingate_rpc_calls_total", '{method="eth_getBlockByHash",outcome="ok"}')).toBe(
      hitsBefore + 2,
    );

    // Not cached yet: asked of the node by the fast path, then answered from the cache.
    const balance = call("eth_getBalance", ["0x00000000000000000000000000000000000000aa", "0x0"], "b");
    const missBefore = await fastAnswers(rt);
    const miss = await post(rt.url, "/", json, balance);
    expect(JSON.parse(miss.text)).toEqual({ jsonrpc: "2.0", id: "b", result: "0x0" });
    expect((await post(rt.url, "/", json, balance)).text).toBe(miss.text);
    expect(await fastAnswers(rt)).toBe(missBefore + 2);
    // The node's answer written with its length known from its bytes (decision 228), an id of more
    // bytes than characters counted as they are.
    for (const id of ["b", "b-é€😀", 12]) {
      const address = `0x${(0xab + String(id).length).toString(16).padStart(40, "0")}`;
      const asked = await post(rt.url, "/", json, call("eth_getBalance", [address, "0x0"], id));
      expect(JSON.parse(asked.text)).toEqual({ jsonrpc: "2.0", id, result: "0x0" });
      expect(asked.headers["content-length"]).toBe(String(Buffer.byteLength(asked.text)));
    }
    expect(await fastAnswers(rt)).toBe(missBefore + 5);

    // Not a read the cache may hold: the body already read is handed on to Fastify and parsed there.
    const logs = call("eth_getLogs", [{ fromBlock: "0x0", toBlock: "0x0" }], "l");
    const accounts = call("eth_accounts", [], "a");
    const handedBefore = await fastAnswers(rt);
    expect(JSON.parse((await post(rt.url, "/", json, logs)).text)).toEqual({
      jsonrpc: "2.0",
      id: "l",
      result: [],
    });
    expect(JSON.parse((await post(rt.url, "/", json, accounts)).text)).toMatchObject({ id: "a", result: [] });
    expect(await fastAnswers(rt)).toBe(handedBefore);
  });

  it("answers what the full path answers for any body (property)", async () => {
    // Cached first, so that the fast path has something to answer.
    await post(rt.url, "/", json, call("eth_chainId", []));
    const item = fc.oneof(
      fc.constantFrom(
        call("eth_chainId", []),
        call("eth_chainId", [], "x"),
        call("eth_chainId", [1]),
        call("eth_getBlockByHash", [blockHash, false], null),
        call("eth_getBlockByHash", [blockHash, "no"]),
        call("eth_getBlockByHash", ["0x12"]),
        call("no_such_method", []),
        JSON.stringify({ jsonrpc: "2.0", method: "eth_chainId", params: [] }),
        JSON.stringify({ jsonrpc: "1.0", id: 1, method: "eth_chainId" }),
        `[${call("eth_chainId", [])},${call("eth_chainId", [], 2)}]`,
        "{",
        "[]",
        "null",
        `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}   `,
      ),
      fc
        .record({
          jsonrpc: fc.constantFrom("2.0", "2"),
          id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
          method: fc.constantFrom("eth_chainId", "net_version", "eth_getBlockByHash"),
          params: fc.oneof(fc.constant([]), fc.constant([blockHash, false]), fc.jsonValue()),
        })
        .map((r) => JSON.stringify(r)),
      // Reads the cache does not hold yet: asked of the node on both paths.
      fc
        .tuple(
          fc.integer({ min: 1, max: 2 ** 40 }),
          fc.constantFrom("latest", "0x0", "pending", "0xffffff", "bad"),
        )
        .map(([n, block]) => call("eth_getBalance", [`0x${n.toString(16).padStart(40, "0")}`, block], n)),
      fc
        .integer({ min: 0, max: 2 ** 30 })
        .map((n) => call("eth_getBlockByNumber", [`0x${n.toString(16)}`, false], `n${n}`)),
      fc
        .tuple(fc.integer({ min: 1, max: 2 ** 40 }), fc.constantFrom("0x", "0x12345678", "0xzz"))
        .map(([n, data]) =>
          call("eth_call", [{ to: `0x${n.toString(16).padStart(40, "0")}`, data }, "latest"]),
        ),
      fc.string({ maxLength: 40 }),
    );
    await fc.assert(
      fc.asyncProperty(item, async (body) => {
        const fast = await post(rt.url, "/", json, body);
        const full = await post(rt.url, "/?chain_id=1001", json, body);
        expect({ status: fast.status, text: fast.text }).toEqual({ status: full.status, text: full.text });
      }),
      { numRuns: 150 },
    );
  });

  it("a Native path's cache hit is answered by the fast path with the full path's bytes; anything else gets what the route answers (property)", async () => {
    const body = JSON.stringify({ params: [blockHash, false], id: 3 });
    const full = await post(rt.url, "/eth_getBlockByHash?chain_id=1001", json, body);
    const before = await fastAnswers(rt);
    const fast = await post(rt.url, "/eth_getBlockByHash", json, body);
    expect(await fastAnswers(rt)).toBe(before + 1);
    expect({ status: fast.status, text: fast.text }).toEqual({ status: full.status, text: full.text });
    expect(fast.headers["content-length"]).toBe(String(Buffer.byteLength(fast.text)));
    const item = fc.oneof(
      fc.constantFrom(
        body,
        JSON.stringify({ params: [blockHash, false] }),
        JSON.stringify({ jsonrpc: "2.0", id: "s", method: "ignored", params: [blockHash, false] }),
        JSON.stringify({ params: [blockHash, false], extra: 1 }),
        JSON.stringify({ jsonrpc: "1.0", params: [blockHash, false] }),
        JSON.stringify({ params: [blockHash] }),
        JSON.stringify({ params: [blockHash, "no"] }),
        JSON.stringify({ params: "x" }),
        JSON.stringify([{ params: [blockHash, false] }]),
        "{",
        "null",
      ),
      fc
        .record({
          id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
          params: fc.oneof(fc.constant([blockHash, false]), fc.constant([blockHash, true]), fc.jsonValue()),
        })
        .map((r) => JSON.stringify(r)),
      fc.string({ maxLength: 40 }),
    );
    await fc.assert(
      fc.asyncProperty(item, fc.constantFrom("eth_getBlockByHash", "eth_chainId"), async (text, method) => {
        const fastAnswer = await post(rt.url, `/${method}`, json, text);
        const fullAnswer = await post(rt.url, `/${method}?chain_id=1001`, json, text);
        expect({ status: fastAnswer.status, text: fastAnswer.text }).toEqual({
          status: fullAnswer.status,
          text: fullAnswer.text,
        });
      }),
      { numRuns: 120 },
    );
  });

  it("a body answered from the cache before, sent again with another id, gets the full path's bytes (property)", async () => {
    const params = `["${blockHash}",false]`;
    // [path, body around its id]: the orders viem and ethers write, and decoys whose first `"id":` is not the call's.
    const shapes: [string, (id: string) => string][] = [
      ["/", (id) => `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByHash","params":${params}}`],
      ["/", (id) => `{"method":"eth_getBlockByHash","params":${params},"id":${id},"jsonrpc":"2.0"}`],
      ["/", (id) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[],"id":7}`],
      ["/", (id) => `{"x":{"id":${id}},"jsonrpc":"2.0","id" :7,"method":"eth_chainId","params":[]}`],
      ["/eth_getBlockByHash", (id) => `{"params":${params},"id":${id}}`],
    ];
    // Each answered twice first (the second from the cache: the body is kept), the decoys with id 7.
    for (const [path, shape] of shapes)
      for (const id of ["7", "7"]) expect((await post(rt.url, path, json, shape(id))).status).toBe(200);
    const anyId = fc.oneof(
      fc.integer(),
      fc.nat(99),
      fc.constantFrom(7, -0, 1.5, 1e21, 123456789012345, 1234567890123456),
      fc.string({ maxLength: 70 }),
      fc.constantFrom("", 'q"', "\u2028", "é"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...shapes), anyId, async ([path, shape], id) => {
        const body = shape(JSON.stringify(id));
        const fast = await post(rt.url, path, json, body);
        const full = await post(rt.url, `${path}?chain_id=1001`, json, body);
        expect({ status: fast.status, text: fast.text }).toEqual({ status: full.status, text: full.text });
      }),
      { numRuns: 150 },
    );
  });

  it("a refused Host, a browser's Origin, a body over 8 KiB and a body sent in pieces get what the full path gives", async () => {
    const body = call("eth_chainId", []);
    await post(rt.url, "/", json, body);
    const before = await fastAnswers(rt);
    const rebinding = await post(rt.url, "/", { ...json, host: "evil.example:8545" }, body);
    expect(rebinding.status).toBe(403);
    expect(JSON.parse(rebinding.text)).toMatchObject({ code: "HOST_NOT_ALLOWED" });
    const page = await post(rt.url, "/", { ...json, origin: "http://evil.example" }, body);
    expect(page.status).toBe(403);
    expect(JSON.parse(page.text)).toMatchObject({ code: "ORIGIN_NOT_ALLOWED" });
    expect(await fastAnswers(rt)).toBe(before);

    // The fast path reads at most 8 KiB of body: past that the full path answers, the same way.
    const padded = (size: number) => `${body}${" ".repeat(size - body.length)}`;
    expect(JSON.parse((await post(rt.url, "/", json, padded(8 * 1024 + 1))).text)).toMatchObject({
      result: "0x3e9",
    });
    expect(await fastAnswers(rt)).toBe(before);
    expect(JSON.parse((await post(rt.url, "/", json, padded(8 * 1024))).text)).toMatchObject({
      result: "0x3e9",
    });
    expect(await fastAnswers(rt)).toBe(before + 1);

    // Headers, then the body in two writes some time apart.
    const port = Number(new URL(rt.url).port);
    const socket = connect(port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    let answer = "";
    socket.on("data", (c: Buffer) => (answer += c.toString()));
    socket.write(
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.slice(0, 10));
    await new Promise((r) => setTimeout(r, 200));
    socket.write(body.slice(10));
    expect(await waitUntil(() => answer.includes('"result":"0x3e9"'), 10_000)).toBe(true);
    socket.destroy();
    expect(await fastAnswers(rt)).toBe(before + 2);
  });
});

describe("node reads on POST / under the per-key limits", () => {
  let rt: TestRuntime;
  let key: string;
  /** /metrics is for admin keys. */
  let admin: string;
  beforeAll(async () => {
    rt = await startTestRuntime({
      env: {
        CHAINGATE_LOG_REQUESTS: "false",
        CHAINGATE_MAX_CONCURRENT_PER_KEY: "3",
      },
    });
    ({ fast: key, ops: admin } = await keysMade(rt, { fast: "user", ops: "admin" }));
  });
  afterAll(async () => rt?.close());

  it("an unknown key is refused, a known one served; bodies held open count against the key's cap", async () => {
    const body = call("eth_chainId", []);
    const auth = { ...json, authorization: `Bearer ${key}` };
    expect((await post(rt.url, "/", auth, body)).status).toBe(200);
    const before = await fastAnswers(rt, admin);
    expect(JSON.parse((await post(rt.url, "/", auth, body)).text)).toMatchObject({ result: "0x3e9" });
    expect(await fastAnswers(rt, admin)).toBe(before + 1);
    const stranger = await post(rt.url, "/", { ...json, authorization: "Bearer cg_not_a_key" }, body);
    expect(stranger.status).toBe(401);
    expect((await post(rt.url, "/", json, body)).status).toBe(401);

    const port = Number(new URL(rt.url).port);
    const held = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const socket = connect(port, "127.0.0.1");
        await new Promise((r) => socket.once("connect", r));
        socket.write(
          `POST / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
        );
        return socket;
      }),
    );
    expect(
      await waitUntil(async () => (await post(rt.url, "/", auth, body)).status === 429, 10_000),
      "three bodies held open fill the key's cap of 3",
    ).toBe(true);
    const refused = await post(rt.url, "/", auth, body);
    expect(JSON.parse(refused.text)).toMatchObject({ code: "CONCURRENCY_LIMIT" });
    for (const socket of held) socket.destroy();
    expect(await waitUntil(async () => (await post(rt.url, "/", auth, body)).status === 200, 10_000)).toBe(
      true,
    );
  });
});

describe("node reads on POST / under the read rate limit", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_LOG_REQUESTS: "false", CHAINGATE_RATE_READ: "20/min" } });

  it("fast answers take the caller's tokens: past the limit, it is told to wait", async () => {
    const body = call("eth_chainId", []);
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) answers.push((await post(rt.url, "/", json, body)).status);
    // 20 a minute (the burst): the first 20 pass, the 21st is refused, fast path or not.
    expect(answers.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(answers[20]).toBe(429);
    const refused = await post(rt.url, "/", json, body);
    expect(JSON.parse(refused.text)).toMatchObject({ code: "RATE_LIMITED" });
    expect(refused.headers["retry-after"]).toBeDefined();
    // /metrics is a read too: once a token is back, it shows each of the 20 was a fast answer.
    let text = "";
    expect(
      await waitUntil(async () => {
        const answer = await fetch(`${rt.url}/metrics`);
        text = await answer.text();
        return answer.status === 200;
      }, 30_000),
    ).toBe(true);
    expect(text).toContain("chaingate_http_fast_path_answers_total 20\n");
  });
});

describe("node reads on POST / with the default configuration (requests logged)", () => {
  const logLines: string[] = [];
  const rt = suiteRuntime({ logLines });

  it("the fast path answers, and every request, fast or full path, has one access-log line", async () => {
    const before = await fastAnswers(rt);
    const chainId = await post(rt.url, "/", { ...json, "x-request-id": "fast-1" }, call("eth_chainId", []));
    expect(JSON.parse(chainId.text)).toMatchObject({ result: "0x3e9" });
    expect(await fastAnswers(rt)).toBe(before + 1);
    // A call the fast path hands on, and a REST route.
    await post(rt.url, "/", { ...json, "x-request-id": "full-1" }, call("eth_accounts", []));
    await fetch(`${rt.url}/readyz`, { headers: { "x-request-id": "full-2" } });

    const lineOf = (id: string) =>
      logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId === id);
    expect(
      await waitUntil(() => ["fast-1", "full-1", "full-2"].every((id) => lineOf(id).length > 0), 10_000),
    ).toBe(true);
    expect(lineOf("fast-1")).toEqual([
      expect.objectContaining({ msg: "request", rpc: "eth_chainId", res: { statusCode: 200 } }),
    ]);
    expect(lineOf("full-1")).toEqual([
      expect.objectContaining({ msg: "request", req: expect.objectContaining({ method: "POST", url: "/" }) }),
    ]);
    expect(lineOf("full-2")).toEqual([
      expect.objectContaining({ req: expect.objectContaining({ method: "GET", url: "/readyz" }) }),
    ]);
  });
});
