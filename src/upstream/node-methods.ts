/** The node methods chaingate reads for itself: their params and results, and the check each answer passes at the boundary (no cast of a node answer anywhere else). */
import type { Hex } from "viem";
import { upstreamUnavailable } from "../errors/rpc-errors.js";

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
  /** A node's pool by sender and nonce (geth, anvil): asked only of a node that seems to hold a ready transaction back. */
  txpool_inspect: { params: []; result: NodeTxpool };
}

/** `txpool_inspect`: per pool part, per sender (as the node spells it), per nonce, a summary. */
export interface NodeTxpool {
  pending?: Record<string, Record<string, unknown>>;
  queued: Record<string, Record<string, unknown>>;
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
  txpool_inspect: (v): v is NodeTxpool =>
    isObject(v) && isObject(v.queued) && Object.values(v.queued).every(isObject),
};

/** The result of a node's call of `method`, typed, or UPSTREAM_UNAVAILABLE for an answer of another shape. */
export function checkedResult<M extends NodeMethod>(method: M, result: unknown): NodeMethods[M]["result"] {
  if (!GUARDS[method](result))
    throw upstreamUnavailable(`${method}: the node answered ${JSON.stringify(result)?.slice(0, 80)}`);
  return result;
}
