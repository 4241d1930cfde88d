import { describe, expect, it } from "vitest";
import type { Envelope } from "../test-support/chain-helpers.js";
import { suiteRuntime } from "../test-support/test-runtime.js";

describe("bad input on the JSON-RPC surfaces gets the right error, never a crash", () => {
  const rt = suiteRuntime({ env: { CHAINGATE_BODY_LIMIT: "4096", CHAINGATE_BATCH_LIMIT: "5" } });

  const raw = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${rt.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    const text = await response.text();
    return { status: response.status, type: response.headers.get("content-type"), text };
  };
  const envelope = async (path: string, body: string) => {
    const answer = await raw(path, body);
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/application\/json/);
    return JSON.parse(answer.text) as Envelope;
  };

  it.each([
    ["/eth_getBalance", "{bad json"],
    ["/", "{bad json"],
    ["/", '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"'],
  ])("malformed JSON on %s is -32700 with id null", async (path, body) => {
    const e = await envelope(path, body);
    expect(e.error?.code).toBe(-32700);
    expect(e.id).toBeNull();
  });

  it.each([
    ["/eth_getBalance", "[1,2]", /one request object/],
    ["/eth_getBalance", "42", /JSON object/],
    ["/eth_getBalance", '"text"', /JSON object/],
    ["/eth_getBalance", '{"id":1,"params":{"a":1}}', /params must be an array/],
    ["/eth_getBalance", '{"id":{"x":1},"params":[]}', /id must be/],
    ["/eth_getBalance", '{"jsonrpc":"1.0","id":1,"params":[]}', /jsonrpc/],
    ["/", "42", /JSON object/],
    ["/", "[]", /must not be empty/],
    ["/", '{"id":1,"method":"eth_chainId"}', /jsonrpc/],
    ["/", '{"jsonrpc":"2.0","id":1}', /method/],
    ["/", '{"jsonrpc":"2.0","id":1,"method":7}', /method/],
    ["/", "", /body must hold/],
  ])("not a valid request on %s (%s) is -32600", async (path, body, message) => {
    const e = await envelope(path, body);
    expect(e.error?.code).toBe(-32600);
    expect(e.error?.message).toMatch(message);
  });

  it("echoes the id of an invalid request when it can be read", async () => {
    const e = await envelope("/eth_getBalance", '{"id":77,"params":"x"}');
    expect(e.id).toBe(77);
  });

  it("unknown paths and methods are -32601", async () => {
    const path = await envelope("/eth_notAMethod", "{}");
    expect(path.error?.code).toBe(-32601);
    expect(path.error?.message).toMatch(/eth_notAMethod/);
    const method = await envelope("/", '{"jsonrpc":"2.0","id":3,"method":"anvil_mine","params":[]}');
    expect(method.error?.code).toBe(-32601);
    expect(method.id).toBe(3);
  });

  it.each([
    ["/eth_getBalance", [], /missing params\[0\] \(address\)/],
    ["/eth_getBalance", ["0x12"], /params\[0\] \(address\) must be 20-byte hex address/],
    ["/eth_getBalance", ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "newest"], /params\[1\] \(block\)/],
    ["/eth_getBlockByNumber", ["0x01", false], /params\[0\] \(block\)/],
    ["/eth_getBlockByHash", ["0x1234", false], /params\[0\] \(blockHash\) must be 32-byte hex hash/],
    ["/eth_getBlockByHash", [`0x${"a".repeat(64)}`, "yes"], /params\[1\] \(hydrated\)/],
    ["/eth_getLogs", [{ fromBlock: 5 }], /params\[0\] \(filter\)/],
    ["/eth_getLogs", [{ topics: [1] }], /params\[0\] \(filter\)/],
    ["/eth_call", [{ to: "0x1" }], /params\[0\] \(transaction\)/],
    ["/eth_call", [{ to: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", data: "0xabc" }], /transaction/],
    ["/eth_sendRawTransaction", ["0x"], /params\[0\] \(transaction\)/],
    ["/eth_blockNumber", [1], /too many params/],
    ["/eth_getFilterChanges", ["not-hex"], /filterId/],
    [
      "/eth_newFilter",
      [{ blockHash: `0x${"a".repeat(64)}`, fromBlock: "0x1" }],
      /either blockHash or fromBlock/,
    ],
    ["/eth_newFilter", [{ fromBlock: "0x5", toBlock: "0x1" }], /after toBlock/],
  ])("bad params on %s %j are -32602 naming the expected shape", async (path, params, message) => {
    const e = await envelope(path, JSON.stringify({ id: 1, params }));
    expect(e.error?.code).toBe(-32602);
    expect(e.error?.message).toMatch(message);
    expect(e.error?.message).toMatch(/expects \[/);
  });

  it("a body over the size limit gets a clear error and the server keeps serving", async () => {
    const big = JSON.stringify({ id: 1, params: [`0x${"ab".repeat(4000)}`] });
    const answer = await raw("/eth_sendRawTransaction", big);
    expect(answer.status).toBe(200);
    const e = JSON.parse(answer.text) as Envelope;
    expect(e.error?.code).toBe(-32600);
    expect(e.error?.message).toMatch(/larger than 4096 bytes/);
    expect((await envelope("/eth_chainId", "{}")).result).toBe("0x3e9");
  });

  it("deep nesting is refused before anything walks it", async () => {
    const deep = `{"id":1,"params":[${"[".repeat(200)}${"]".repeat(200)}]}`;
    const e = await envelope("/eth_getBalance", deep);
    expect(e.error?.code).toBe(-32700);
    expect(e.error?.message).toMatch(/nested deeper/);
  });

  it("batches are bounded, answered in order, with per-call errors", async () => {
    const batch = (n: number) =>
      JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" })));
    const tooBig = JSON.parse((await raw("/", batch(6))).text) as Envelope;
    expect(tooBig.error?.code).toBe(-32600);
    expect(tooBig.error?.message).toMatch(/at most 5/);
    const ok = JSON.parse((await raw("/", batch(5))).text) as Envelope[];
    expect(ok.map((e) => e.id)).toEqual([0, 1, 2, 3, 4]);
    const mixed = JSON.parse(
      (
        await raw(
          "/",
          JSON.stringify([
            { jsonrpc: "2.0", id: "a", method: "eth_chainId" },
            { jsonrpc: "2.0", id: "b", method: "eth_getBalance", params: ["bad"] },
            17,
          ]),
        )
      ).text,
    ) as Envelope[];
    expect(mixed.map((e) => e.error?.code ?? "ok")).toEqual(["ok", -32602, -32600]);
  });

  it("notifications (no id) on POST / get no answer", async () => {
    const single = await raw("/", JSON.stringify({ jsonrpc: "2.0", method: "eth_chainId" }));
    expect(single.status).toBe(204);
    expect(single.text).toBe("");
    const batch = await raw(
      "/",
      JSON.stringify([
        { jsonrpc: "2.0", method: "eth_chainId" },
        { jsonrpc: "2.0", id: 5, method: "eth_chainId" },
      ]),
    );
    expect((JSON.parse(batch.text) as Envelope[]).map((e) => e.id)).toEqual([5]);
  });

  it("a bad chain selector is an invalid request, not the home chain", async () => {
    for (const query of ["?chain_id=abc", "?chain_id=-1", "?chain_id=0"]) {
      const e = await envelope(`/eth_chainId${query}`, "{}");
      expect(e.error?.code, query).toBe(-32600);
    }
  });

  it("other routes answer problem JSON, never HTML or a stack trace", async () => {
    const response = await fetch(`${rt.url}/nope`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/application\/problem\+json/);
    const body = (await response.json()) as { code: string; detail: string };
    expect(body.code).toBe("NOT_FOUND");
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  });
});
