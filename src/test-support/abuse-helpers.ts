/** Helpers for the abuse tests: a contract that emits many logs, WebSocket clients, raw JSON-RPC batches. */
import WebSocket from "ws";
import { devSend, receiptOf } from "./chain-helpers.js";
import { DEV_ACCOUNT } from "./evm-fixtures.js";
import type { TestRuntime } from "./test-runtime.js";

/**
 * Init code of a contract whose every call emits 1,024 LOG1 events (topic 0xab, no data):
 * a counter from 0x400 down to zero around LOG1.
 */
const FLOOD_RUNTIME = [
  "610400",
  "5b",
  "60ab",
  "6000",
  "6000",
  "a1",
  "6001",
  "90",
  "03",
  "80",
  "6003",
  "57",
  "00",
];
export const LOG_FLOOD_INIT_CODE =
  `0x${["6014", "80", "600b", "6000", "39", "6000", "f3", ...FLOOD_RUNTIME].join("")}` as const;
export const LOGS_PER_CALL = 1024;

/**
 * Deploys the flood contract from a dev account and calls it `calls` times: `calls` x 1,024 logs,
 * one call a block, each mined before the next is sent. Answers the calls' blocks in order: the
 * chain may have made other blocks since (CI on a loaded machine saw four; the embedded devnet
 * automines, and its watchdog and state guard each mine what they find left in its pool), so the
 * head is not the last call's block.
 */
export async function floodLogs(rt: TestRuntime, calls: number): Promise<number[]> {
  const deploy = await devSend(rt, { from: DEV_ACCOUNT, data: LOG_FLOOD_INIT_CODE });
  const address = (await receiptOf(rt, deploy)).contractAddress!;
  const blocks: number[] = [];
  for (let i = 0; i < calls; i++) {
    // Each call mined before the next is sent: two sent together could share a block when a
    // loaded machine's devnet mined its pool late (CI saw it once), and the tests read the calls'
    // blocks as one call's logs each.
    const hash = await devSend(rt, { from: DEV_ACCOUNT, to: address, gas: "0x1e8480" });
    const receipt = await receiptOf(rt, hash);
    if (receipt.status !== "0x1" || receipt.logs.length !== LOGS_PER_CALL)
      throw new Error("flood call failed");
    blocks.push(Number(receipt.blockNumber));
  }
  if (new Set(blocks).size !== calls) throw new Error("flood calls shared a block");
  return blocks;
}

export interface Client {
  socket: WebSocket;
  call(
    method: string,
    params?: unknown[],
  ): Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }>;
  closed: Promise<number>;
}

/** A WebSocket JSON-RPC client; `protocols` carries an API key as "bearer.<key>". */
export async function connect(rt: TestRuntime, key?: string): Promise<Client> {
  const socket = new WebSocket(rt.url.replace("http", "ws"), key ? [`bearer.${key}`, "chaingate"] : []);
  const waiting = new Map<number, (answer: never) => void>();
  let next = 1;
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString()) as { id?: number };
    if (typeof message.id === "number") waiting.get(message.id)?.(message as never);
  });
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once("error", reject);
  });
  return {
    socket,
    closed,
    call: (method, params = []) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve as (answer: never) => void);
        socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      }),
  };
}

/** Peak resident memory of this process while `work` runs (sampled every 20 ms). */
export async function peakRss<T>(work: () => Promise<T>): Promise<{ value: T; peakMb: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, peakMb: Math.round(peak / 1048576) };
  } finally {
    clearInterval(timer);
  }
}
