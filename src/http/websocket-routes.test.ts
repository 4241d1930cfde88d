import { createPublicClient, defineChain, webSocket } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { mine, sendAndWait } from "../test-support/chain-helpers.js";
import {
  DEV_ACCOUNT,
  DEV_ACCOUNT_2,
  EMITTER_INIT_CODE,
  EMITTER_TOPIC,
} from "../test-support/evm-fixtures.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const chain = defineChain({
  id: 1001,
  name: "chaingate devnet",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [] } },
});

/** A raw socket that collects every message. */
async function openSocket(
  url: string,
): Promise<{ socket: WebSocket; messages: unknown[]; next: (n?: number) => Promise<unknown[]> }> {
  const socket = new WebSocket(url);
  const messages: unknown[] = [];
  socket.on("message", (data) => messages.push(JSON.parse(data.toString())));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const next = async (n = 1) => {
    for (let i = 0; i < 100 && messages.length < n; i++) await new Promise((r) => setTimeout(r, 50));
    return messages.splice(0, n);
  };
  return { socket, messages, next };
}

describe("JSON-RPC over WebSocket", () => {
  let rt: TestRuntime;
  let wsUrl: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ env: { CHAINGATE_HEAD_POLL_MS: "50" } });
    wsUrl = rt.url.replace("http", "ws");
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("viem over the socket: ordinary calls, and newHeads delivered once per block, in order", async () => {
    const client = createPublicClient({ chain, transport: webSocket(`${wsUrl}/`) });
    expect(await client.getChainId()).toBe(1001);
    const start = await client.getBlockNumber({ cacheTime: 0 });
    const seen: bigint[] = [];
    // With a WebSocket transport viem subscribes (eth_subscribe newHeads) instead of polling.
    const unwatch = client.watchBlockNumber({ onBlockNumber: (n) => seen.push(n) });
    await new Promise((r) => setTimeout(r, 200));
    await mine(rt, 3);
    for (let i = 0; i < 50 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
    unwatch();
    expect(seen).toEqual([start + 1n, start + 2n, start + 3n]);
  });

  it("logs subscriptions deliver each matching log once", async () => {
    const emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE })).contractAddress!;
    const { socket, messages, next } = await openSocket(`${wsUrl}/ws`);
    socket.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_subscribe",
        params: ["logs", { address: emitter, topics: [EMITTER_TOPIC] }],
      }),
    );
    const [ack] = (await next()) as { result: string }[];
    expect(ack?.result).toMatch(/^0x[1-9a-f][0-9a-f]{0,31}$/);
    const a = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
    await sendAndWait(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" });
    const b = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
    const pushed = (await next(2)) as {
      method: string;
      params: { subscription: string; result: { transactionHash: string } };
    }[];
    expect(pushed.map((m) => m.method)).toEqual(["eth_subscription", "eth_subscription"]);
    expect(pushed.map((m) => m.params.subscription)).toEqual([ack!.result, ack!.result]);
    expect(pushed.map((m) => m.params.result.transactionHash)).toEqual([
      a.transactionHash,
      b.transactionHash,
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect(messages).toHaveLength(0);

    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "eth_unsubscribe", params: [ack!.result] }));
    expect(((await next()) as { result: boolean }[])[0]?.result).toBe(true);
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "eth_unsubscribe", params: [ack!.result] }));
    expect(((await next()) as { result: boolean }[])[0]?.result).toBe(false);
    socket.close();
  });

  it("newPendingTransactions subscriptions report transaction hashes", async () => {
    const { socket, next } = await openSocket(`${wsUrl}/`);
    socket.send(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newPendingTransactions"] }),
    );
    await next();
    await new Promise((r) => setTimeout(r, 200));
    const r = await sendAndWait(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x2" });
    const pushed = (await next()) as { params: { result: string } }[];
    expect(pushed[0]?.params.result).toBe(r.transactionHash);
    socket.close();
  });

  it("bad messages get JSON-RPC errors and the socket stays open", async () => {
    const { socket, next } = await openSocket(`${wsUrl}/`);
    socket.send("{nope");
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "eth_subscribe", params: ["everything"] }));
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "eth_getBalance", params: ["0x1"] }));
    socket.send(JSON.stringify([]));
    const answers = (await next(4)) as { id: unknown; error: { code: number } }[];
    expect(answers.map((a) => a.error.code).sort()).toEqual([-32700, -32602, -32602, -32600].sort());
    socket.send(
      JSON.stringify([
        { jsonrpc: "2.0", id: 7, method: "eth_chainId" },
        { jsonrpc: "2.0", method: "eth_chainId" },
      ]),
    );
    const [batch] = (await next()) as { id: number; result: string }[][];
    expect(batch).toEqual([{ jsonrpc: "2.0", id: 7, result: "0x3e9" }]);
    socket.close();
  });

  it("a plain GET / explains itself instead of a bare 404", async () => {
    const response = await fetch(`${rt.url}/`);
    expect(response.status).toBe(426);
    expect(((await response.json()) as { code: string }).code).toBe("UPGRADE_REQUIRED");
  });
});
