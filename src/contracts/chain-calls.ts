/** Reads from contracts through a chain's upstream pool, and waits for receipts; node errors stay typed. */
import {
  type Abi,
  type ContractFunctionArgs,
  type ContractFunctionName,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
} from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { upstreamUnavailable } from "../errors/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, receiptOf } from "../upstream/node-reads.js";

export async function readContract<
  const abi extends Abi,
  name extends ContractFunctionName<abi, "view" | "pure">,
  args extends ContractFunctionArgs<abi, "view" | "pure", name>,
>(chain: Chain, address: Hex, abi: abi, functionName: name, args: args, block: string = "latest") {
  const data = encodeFunctionData({ abi, functionName, args } as never);
  const raw = await nodeRead(chain, "eth_call", [{ to: address, data }, block]);
  return decodeFunctionResult({ abi, functionName, data: raw } as never) as ReturnType<
    typeof decodeFunctionResult<abi, name, args>
  >;
}

export function codeAt(chain: Chain, address: Hex): Promise<Hex> {
  return nodeRead(chain, "eth_getCode", [address, "latest"]);
}

/**
 * Reads until `found` accepts what was read or the deadline has passed (50 ms between reads,
 * doubling to 1 s): the last value read.
 */
async function readUntil<T>(
  read: () => Promise<T>,
  found: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const value = await read();
    if (found(value) || Date.now() + delay > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * The code at an address a deployment whose receipt is in has written. A chain's upstreams are read
 * in turn, and one behind the node that gave the receipt answers "0x" until it has the block (CI
 * saw a deployment refused so on a chain with two nodes), so "0x" is read again until the deadline.
 */
export function deployedCodeAt(chain: Chain, address: Hex, timeoutMs = 30_000): Promise<Hex> {
  return readUntil(
    () => codeAt(chain, address),
    (code) => code !== "0x",
    timeoutMs,
  );
}

export interface Receipt {
  status: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  contractAddress: Hex | null;
  logs: { address: Hex; topics: Hex[]; data: Hex; logIndex: Hex }[];
}

/** Polls for a receipt; a timeout is retryable (the transaction is still tracked and may yet be mined). */
export async function waitForReceipt(chain: Chain, hash: Hex, timeoutMs = 60_000): Promise<Receipt> {
  const receipt = await readUntil(() => receiptOf(chain, hash), Boolean, timeoutMs);
  if (!receipt) {
    throw new ChaingateError(`transaction ${hash} not mined within ${Math.round(timeoutMs / 1000)} s`, {
      code: "NOT_MINED_YET",
      data: { tx_hash: hash },
    });
  }
  chain.head?.observe(Number(BigInt(receipt.blockNumber)));
  const { status, logs } = receipt;
  // Chaingate's own transactions are read for their status and events: a receipt without them is the node's fault.
  if (status === undefined || !Array.isArray(logs))
    throw upstreamUnavailable(`receipt of ${hash} has no status or logs`);
  return { ...receipt, status, logs, contractAddress: receipt.contractAddress ?? null };
}
