/** Typed node reads: each method's params and result, checked where the answer enters our code, and the named reads built on them. */
import type { Hex } from "viem";
import { upstreamUnavailable } from "../errors/rpc-errors.js";
import type { Chain } from "./chain-registry.js";
import { JsonText } from "./json-text.js";

/** A receipt as a node answers it; the fields chaingate reads are checked, the rest passed on as they are. */
export interface NodeReceipt {
  transactionHash: Hex;
  blockHash: Hex;
  blockNumber: Hex;
  status?: Hex;
  contractAddress?: Hex | null;
  logs?: NodeLog[];
  [field: string]: unknown;
}

/** A block header as a node answers it (hashes only), with the fields chaingate reads checked. */
export interface NodeBlock {
  number: Hex | null;
  hash: Hex | null;
  parentHash: Hex;
  baseFeePerGas?: Hex;
  /** Hashes, or transaction objects when asked hydrated. */
  transactions?: unknown[];
  uncles?: unknown[];
  [field: string]: unknown;
}

/** eth_feeHistory's answer, with the field chaingate reads. */
export interface NodeFeeHistory {
  baseFeePerGas?: Hex[];
  [field: string]: unknown;
}

/** A block specifier as a client gave it (a tag, number, hash or EIP-1898 object), already validated. */
export type BlockId = string | Record<string, unknown>;

/** A mined log as eth_getLogs answers it. */
export interface NodeLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  logIndex: Hex;
  removed?: boolean;
  [field: string]: unknown;
}

/** The node methods chaingate calls for itself, with their params and the result it may rely on. */
export interface NodeMethods {
  eth_chainId: { params: []; result: Hex };
  eth_config: { params: []; result: Record<string, unknown> };
  eth_blockNumber: { params: []; result: Hex };
  eth_syncing: { params: []; result: false | Record<string, unknown> };
  eth_accounts: { params: []; result: Hex[] };
  eth_gasPrice: { params: []; result: Hex };
  eth_maxPriorityFeePerGas: { params: []; result: Hex };
  eth_getTransactionCount: { params: [address: string, block: string]; result: Hex };
  eth_getBalance: { params: [address: string, block: string]; result: Hex };
  eth_getCode: { params: [address: string, block: string]; result: Hex };
  eth_getStorageAt: { params: [address: string, slot: string, block: BlockId]; result: Hex };
  eth_feeHistory: {
    params: [count: Hex, newest: string, percentiles: number[]];
    result: NodeFeeHistory | null;
  };
  eth_simulateV1: { params: [payload: Record<string, unknown>, block: string]; result: unknown[] };
  eth_estimateGas: { params: [call: Record<string, unknown>, block: string]; result: Hex };
  eth_call: { params: [call: Record<string, unknown>, block: string]; result: Hex };
  eth_sendRawTransaction: { params: [raw: Hex]; result: Hex };
  /** A node account's send (the devnet switch that lists the node's own accounts). */
  eth_sendTransaction: { params: [tx: Record<string, unknown>]; result: Hex };
  eth_getTransactionByHash: { params: [hash: string]; result: Record<string, unknown> | null };
  eth_getTransactionReceipt: { params: [hash: string]; result: NodeReceipt | null };
  eth_getBlockByNumber: { params: [block: BlockId, hydrated: boolean]; result: NodeBlock | null };
  eth_getBlockByHash: { params: [hash: string, hydrated: boolean]; result: NodeBlock | null };
  eth_getLogs: { params: [filter: object]; result: NodeLog[] };
  eth_newPendingTransactionFilter: { params: []; result: Hex };
  eth_getFilterChanges: { params: [id: string]; result: unknown[] };
  /** A devnet's funding (anvil, Hardhat): its answer is not read. */
  anvil_setBalance: { params: [address: string, wei: Hex]; result: unknown };
}

export type NodeMethod = keyof NodeMethods;

const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const DATA = /^0x([0-9a-fA-F]{2})*$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;

const isQuantity = (v: unknown): v is Hex => typeof v === "string" && QUANTITY.test(v);
const isData = (v: unknown): v is Hex => typeof v === "string" && DATA.test(v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const orNull =
  <T>(guard: (v: unknown) => v is T) =>
  (v: unknown): v is T | null =>
    v === null || guard(v);

/** A field of an answer passed on to a client (left as the node gave it), or undefined when it is not an object. */
export function fieldOf(value: unknown, name: string): unknown {
  return isObject(value) && !Array.isArray(value) ? value[name] : undefined;
}

export const isReceipt = (v: unknown): v is NodeReceipt =>
  isObject(v) &&
  typeof v.transactionHash === "string" &&
  typeof v.blockHash === "string" &&
  HASH.test(v.blockHash) &&
  isQuantity(v.blockNumber);

const isBlock = (v: unknown): v is NodeBlock =>
  isObject(v) && typeof v.parentHash === "string" && (v.hash === null || typeof v.hash === "string");

const isLog = (v: unknown): v is NodeLog =>
  isObject(v) &&
  typeof v.address === "string" &&
  Array.isArray(v.topics) &&
  typeof v.data === "string" &&
  typeof v.blockNumber === "string" &&
  typeof v.blockHash === "string";

const GUARDS: { readonly [M in NodeMethod]: (v: unknown) => v is NodeMethods[M]["result"] } = {
  eth_chainId: isQuantity,
  eth_config: isObject,
  eth_blockNumber: isQuantity,
  eth_syncing: (v): v is false | Record<string, unknown> => v === false || isObject(v),
  eth_accounts: (v): v is Hex[] => Array.isArray(v) && v.every((a) => typeof a === "string"),
  eth_gasPrice: isQuantity,
  eth_maxPriorityFeePerGas: isQuantity,
  eth_getTransactionCount: isQuantity,
  eth_getBalance: isQuantity,
  eth_getCode: isData,
  eth_getStorageAt: isData,
  eth_feeHistory: orNull(isObject),
  eth_simulateV1: (v): v is unknown[] => Array.isArray(v),
  eth_estimateGas: isQuantity,
  eth_call: isData,
  eth_sendRawTransaction: (v): v is Hex => typeof v === "string" && HASH.test(v),
  eth_sendTransaction: (v): v is Hex => typeof v === "string" && HASH.test(v),
  eth_getTransactionByHash: orNull(isObject),
  eth_getTransactionReceipt: orNull(isReceipt),
  eth_getBlockByNumber: orNull(isBlock),
  eth_getBlockByHash: orNull(isBlock),
  eth_getLogs: (v): v is NodeLog[] => Array.isArray(v) && v.every(isLog),
  eth_newPendingTransactionFilter: isQuantity,
  eth_getFilterChanges: (v): v is unknown[] => Array.isArray(v),
  anvil_setBalance: (_v): _v is unknown => true,
};

/** The result of a node's call of `method`, typed, or UPSTREAM_UNAVAILABLE for an answer of another shape. */
export function checkedResult<M extends NodeMethod>(method: M, result: unknown): NodeMethods[M]["result"] {
  if (!GUARDS[method](result))
    throw upstreamUnavailable(`${method}: the node answered ${JSON.stringify(result)?.slice(0, 80)}`);
  return result;
}

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
