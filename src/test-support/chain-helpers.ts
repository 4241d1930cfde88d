/** Helpers for integration tests that talk to a running chaingate over HTTP. */
import type { TestRuntime } from "./test-runtime.js";

export interface Envelope {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** Calls a Native path and returns the envelope; throws if the HTTP status is not 200. */
export async function native(
  rt: TestRuntime,
  method: string,
  params?: unknown[],
  query = "",
): Promise<Envelope> {
  const { status, json } = await rt.post(
    `/${method}${query}`,
    params === undefined ? undefined : { id: 1, params },
  );
  if (status !== 200) throw new Error(`${method} answered HTTP ${status}`);
  return json as Envelope;
}

export async function result<T = unknown>(
  rt: TestRuntime,
  method: string,
  params?: unknown[],
  query = "",
): Promise<T> {
  const envelope = await native(rt, method, params, query);
  if (envelope.error) throw new Error(`${method} failed: ${JSON.stringify(envelope.error)}`);
  return envelope.result as T;
}

export interface Receipt {
  status: string;
  contractAddress: string | null;
  blockHash: string;
  blockNumber: string;
  transactionHash: string;
  logs: { topics: string[]; blockNumber: string; logIndex: string; transactionHash: string }[];
}

/** Waits for a transaction's receipt, as a client does (the node may mine just after accepting). */
export async function receiptOf(rt: TestRuntime, hash: string, query = ""): Promise<Receipt> {
  for (let i = 0; i < 200; i++) {
    const receipt = await result<Receipt | null>(rt, "eth_getTransactionReceipt", [hash], query);
    if (receipt) return receipt;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no receipt for ${hash}`);
}

/** Sends from a node-held dev account (devnet only) and waits for the receipt. */
export async function sendAndWait(
  rt: TestRuntime,
  tx: Record<string, unknown>,
  query = "",
): Promise<Receipt> {
  return receiptOf(rt, await result<string>(rt, "eth_sendTransaction", [tx], query), query);
}

/** Calls a node directly, for test set-up the gateway does not expose (anvil_mine, evm_snapshot ...). */
export async function nodeCall(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method} failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** Mines blocks directly on an embedded node (anvil_mine is not exposed through the gateway). */
export async function mine(rt: TestRuntime, blocks: number, chainIndex = 0): Promise<void> {
  const node = rt.devnet?.nodes[chainIndex];
  if (!node) throw new Error("no embedded node");
  await nodeCall(node.url, "anvil_mine", [`0x${blocks.toString(16)}`]);
}

/** Opens a WebSocket to chaingate, subscribes to logs, and collects each notification as "hash:logIndex:removed". */
export async function collectLogNotifications(
  rt: TestRuntime,
  criteria: Record<string, unknown>,
): Promise<{ seen: string[]; close: () => void }> {
  const { default: WebSocket } = await import("ws");
  const socket = new WebSocket(rt.url.replace("http", "ws"));
  const seen: string[] = [];
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString()) as {
      method?: string;
      params?: { result: { transactionHash: string; logIndex: string; removed: boolean } };
    };
    if (message.method === "eth_subscription") {
      const log = message.params!.result;
      seen.push(`${log.transactionHash}:${log.logIndex}:${log.removed}`);
    }
  });
  await new Promise((resolve) => socket.once("open", resolve));
  socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["logs", criteria] }));
  // The subscription is in place once chaingate has answered its id.
  await new Promise((r) => setTimeout(r, 300));
  return { seen, close: () => socket.close() };
}
