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

/** Mines blocks directly on the embedded node (anvil_mine is not exposed through the gateway). */
export async function mine(rt: TestRuntime, blocks: number, chainIndex = 0): Promise<void> {
  const node = rt.devnet?.nodes[chainIndex];
  if (!node) throw new Error("no embedded node");
  const response = await fetch(node.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "anvil_mine",
      params: [`0x${blocks.toString(16)}`],
    }),
  });
  const body = (await response.json()) as { error?: unknown };
  if (body.error) throw new Error(`anvil_mine failed: ${JSON.stringify(body.error)}`);
}
