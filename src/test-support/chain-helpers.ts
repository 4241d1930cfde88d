/** Helpers for integration tests that talk to a running chaingate over HTTP. */
import { defineChain } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { DEV_ACCOUNT, DEV_ACCOUNT_2, DEV_PRIVATE_KEY } from "./evm-fixtures.js";
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

/** The node behind a runtime's chain: the embedded anvil, or the first configured upstream. */
export function nodeUrlOf(rt: TestRuntime, chainId = 1001): string {
  const embedded = rt.devnet?.nodes.find((n) => n.chainId === chainId)?.url;
  if (embedded) return embedded;
  const chains = rt.config.chains ?? [];
  const chain = chains.find((c) => c.chainId === chainId) ?? chains[0];
  if (!chain?.upstreams[0]) throw new Error(`no node for chain ${chainId}`);
  return chain.upstreams[0].url;
}

export interface DevTransaction {
  from?: string;
  to?: string;
  data?: string;
  value?: string;
  gas?: string;
}

/**
 * Sends from anvil's dev account #0 as a client with its own key does: signed here (nonce, gas
 * and fees read from the node itself, so no cached answer can repeat a nonce), sent through the
 * gateway's eth_sendRawTransaction. Production nodes hold no unlocked accounts, so neither does
 * the gateway: eth_sendTransaction signs with custody wallets only.
 */
export async function devSend(
  rt: TestRuntime,
  tx: DevTransaction,
  query = "",
  nodeUrl?: string,
): Promise<string> {
  if (tx.from !== undefined && tx.from.toLowerCase() !== DEV_ACCOUNT.toLowerCase()) {
    throw new Error(`devSend signs for ${DEV_ACCOUNT} only`);
  }
  const chainId = Number(/chain_id=(\d+)/.exec(query)?.[1] ?? 1001);
  const node = nodeUrl ?? nodeUrlOf(rt, chainId);
  const call = {
    from: DEV_ACCOUNT,
    ...(tx.to ? { to: tx.to } : {}),
    data: tx.data ?? "0x",
    value: tx.value ?? "0x0",
  };
  const [nonce, gas, block] = await Promise.all([
    nodeCall(node, "eth_getTransactionCount", [DEV_ACCOUNT, "pending"]),
    tx.gas ?? nodeCall(node, "eth_estimateGas", [call, "pending"]),
    nodeCall(node, "eth_getBlockByNumber", ["latest", false]),
  ]);
  const baseFee = BigInt((block as { baseFeePerGas: string }).baseFeePerGas);
  const raw = await privateKeyToAccount(DEV_PRIVATE_KEY).signTransaction({
    type: "eip1559",
    chainId,
    nonce: Number(BigInt(nonce as string)),
    gas: tx.gas === undefined ? (BigInt(gas as string) * 12n) / 10n : BigInt(tx.gas),
    maxFeePerGas: baseFee * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    ...(tx.to ? { to: tx.to as `0x${string}` } : {}),
    data: call.data as `0x${string}`,
    value: BigInt(call.value),
  });
  return result<string>(rt, "eth_sendRawTransaction", [raw], query);
}

/** Sends from anvil's dev account (see devSend) and waits for the receipt. */
export async function sendAndWait(rt: TestRuntime, tx: DevTransaction, query = ""): Promise<Receipt> {
  return receiptOf(rt, await devSend(rt, tx, query), query);
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

/** viem's chain object for a chaingate URL (the embedded home chain's id by default). */
export function chainAt(url: string, id = 1001) {
  return defineChain({
    id,
    name: `chain-${id}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
}

/** A receipt read from the node itself (for tests whose chaingate reads need a key), polled until mined. */
export async function nodeReceipt(
  url: string,
  hash: unknown,
): Promise<{ status: string; blockHash: string }> {
  for (let i = 0; i < 400; i++) {
    const receipt = await nodeCall(url, "eth_getTransactionReceipt", [hash]);
    if (receipt) return receipt as { status: string; blockHash: string };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no receipt for ${String(hash)}`);
}

/** A 1-wei transfer from the dev account to DEV_ACCOUNT_2, signed at `nonce` (a raw transaction to send). */
export function devTransferAt(chainId: number, nonce: number): Promise<`0x${string}`> {
  return privateKeyToAccount(DEV_PRIVATE_KEY).signTransaction({
    chainId,
    type: "eip1559",
    nonce,
    to: DEV_ACCOUNT_2,
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: 20_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
}
