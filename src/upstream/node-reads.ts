/** Typed node reads: each method's params and result, checked where the answer enters our code, and the named reads built on them. */
import type { Hex } from "viem";
import { upstreamUnavailable } from "../errors/rpc-errors.js";
import type { Chain } from "./chain-registry.js";
import { JsonText } from "./json-text.js";
import { checkedResult, type NodeMethod, type NodeMethods, type NodeReceipt } from "./node-methods.js";

export * from "./node-methods.js";

/**
 * Calls `method` through the chain's pool and answers its result, typed: an answer of another
 * shape is a fault of that node (retryable), never cast into one. `batch` may share one HTTP
 * request with the other batchable calls of the turn.
 */
export async function nodeRead<M extends NodeMethod>(
  chain: Chain,
  method: M,
  params: NodeMethods[M]["params"],
  options: { batch?: boolean } = {},
): Promise<NodeMethods[M]["result"]> {
  return checkedResult(
    method,
    await chain.pool.call({ method, params, ...(options.batch ? { batch: true } : {}) }),
  );
}

/** As nodeRead, on one named upstream (quorum reads, and state that lives on one node). */
export async function nodeReadOn<M extends NodeMethod>(
  chain: Chain,
  label: string,
  method: M,
  params: NodeMethods[M]["params"],
): Promise<NodeMethods[M]["result"]> {
  return checkedResult(method, await chain.pool.callOn(label, { method, params }));
}

/** eth_getLogs answered as the node's own JSON text (passed to clients unparsed), with its item count. */
export async function logsText(chain: Chain, filter: object): Promise<JsonText> {
  const text = await chain.pool.call({ method: "eth_getLogs", params: [filter], asText: true });
  if (!(text instanceof JsonText))
    throw upstreamUnavailable("eth_getLogs: the node's answer was not kept as text");
  return text;
}

/**
 * The chain's head as a node says it now (eth_blockNumber through the pool), as a number. The read
 * is noted in the chain's head tracker (it only ever moves forward), so caches know that block.
 */
export async function headOf(chain: Chain): Promise<number> {
  const head = Number(BigInt(await nodeRead(chain, "eth_blockNumber", [])));
  chain.head?.observe(head);
  return head;
}

/** The address's transaction count at `block` (its next nonce, at "pending"). */
export async function nonceOf(chain: Chain, address: string, block = "pending"): Promise<number> {
  return Number(BigInt(await nodeRead(chain, "eth_getTransactionCount", [address, block])));
}

/** A transaction's receipt, or null while the node has none. */
export function receiptOf(
  chain: Chain,
  hash: string,
  options: { batch?: boolean } = {},
): Promise<NodeReceipt | null> {
  return nodeRead(chain, "eth_getTransactionReceipt", [hash], options);
}

/** Sends signed bytes; answers the hash the node gives. */
export function sendRawTransaction(chain: Chain, raw: Hex, options: { batch?: boolean } = {}): Promise<Hex> {
  return nodeRead(chain, "eth_sendRawTransaction", [raw], options);
}

/** The hash of block `number` on the chain now; null when the node has no such block. */
export async function blockHashAt(
  chain: Chain,
  number: number,
  options: { batch?: boolean } = {},
): Promise<Hex | null> {
  const block = await nodeRead(chain, "eth_getBlockByNumber", [`0x${number.toString(16)}`, false], options);
  return block?.hash ?? null;
}
