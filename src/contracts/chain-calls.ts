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
import type { Chain } from "../upstream/chain-registry.js";

export async function readContract<
  const abi extends Abi,
  name extends ContractFunctionName<abi, "view" | "pure">,
  args extends ContractFunctionArgs<abi, "view" | "pure", name>,
>(chain: Chain, address: Hex, abi: abi, functionName: name, args: args, block: string = "latest") {
  const data = encodeFunctionData({ abi, functionName, args } as never);
  const raw = (await chain.pool.call({ method: "eth_call", params: [{ to: address, data }, block] })) as Hex;
  return decodeFunctionResult({ abi, functionName, data: raw } as never) as ReturnType<
    typeof decodeFunctionResult<abi, name, args>
  >;
}

export async function codeAt(chain: Chain, address: Hex): Promise<Hex> {
  return (await chain.pool.call({ method: "eth_getCode", params: [address, "latest"] })) as Hex;
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
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const receipt = (await chain.pool.call({
      method: "eth_getTransactionReceipt",
      params: [hash],
    })) as Receipt | null;
    if (receipt) {
      chain.head?.observe(Number(BigInt(receipt.blockNumber)));
      return receipt;
    }
    if (Date.now() + delay > deadline) {
      throw new ChaingateError(`transaction ${hash} not mined within ${Math.round(timeoutMs / 1000)} s`, {
        code: "NOT_MINED_YET",
        data: { tx_hash: hash },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
