/** The standard transaction object of eth_sendTransaction / eth_signTransaction, read into the pipeline's terms. */
import { type AccessList, getAddress, type Hex } from "viem";
import { invalidParams } from "../errors/rpc-errors.js";
import type { Fees } from "../tx/fee-oracle.js";

/** As the method table's schema admits it (hex quantities, 0x data). */
export interface TransactionObject {
  from: string;
  to?: string | null;
  gas?: string;
  gasPrice?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  maxFeePerBlobGas?: string;
  value?: string;
  data?: string;
  input?: string;
  nonce?: string;
  type?: string;
  chainId?: string;
  accessList?: { address: string; storageKeys: string[] }[];
  blobVersionedHashes?: string[];
  authorizationList?: unknown[];
}

export interface TransactionRequest {
  from: Hex;
  to: Hex | null;
  data: Hex;
  value: bigint;
  gas?: bigint;
  nonce?: number;
  accessList?: AccessList;
  /** What the caller fixed about fees; the rest comes from the fee oracle. */
  fees: FeeChoice;
}

export type FeeChoice =
  | { kind: "auto"; legacy: boolean }
  | { kind: "legacy"; gasPrice: bigint }
  | { kind: "eip1559"; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint };

const big = (hex: string | undefined): bigint | undefined => (hex === undefined ? undefined : BigInt(hex));

export function readTransaction(tx: TransactionObject, chainId: number): TransactionRequest {
  if (tx.blobVersionedHashes !== undefined || tx.maxFeePerBlobGas !== undefined) {
    throw invalidParams("blob transactions (type 3) are not signed by chaingate");
  }
  if (tx.authorizationList !== undefined) {
    throw invalidParams("set-code transactions (type 4) are not signed by chaingate");
  }
  const type = tx.type === undefined ? undefined : Number(BigInt(tx.type));
  if (type !== undefined && type > 2)
    throw invalidParams(`transaction type ${tx.type} is not supported (0, 1 or 2)`);
  if (tx.chainId !== undefined && BigInt(tx.chainId) !== BigInt(chainId)) {
    throw invalidParams(
      `chainId ${tx.chainId} does not match the chain this call goes to (${chainId}); select it with ?chain_id=`,
    );
  }
  if (tx.data !== undefined && tx.input !== undefined && tx.data.toLowerCase() !== tx.input.toLowerCase()) {
    throw invalidParams("data and input are both set and differ");
  }
  const data = (tx.input ?? tx.data ?? "0x").toLowerCase() as Hex;
  const to = tx.to === undefined || tx.to === null ? null : getAddress(tx.to);
  if (to === null && data === "0x")
    throw invalidParams("a transaction without `to` deploys a contract and needs data");

  const gasPrice = big(tx.gasPrice);
  const maxFee = big(tx.maxFeePerGas);
  const tip = big(tx.maxPriorityFeePerGas);
  if (gasPrice !== undefined && (maxFee !== undefined || tip !== undefined)) {
    throw invalidParams("give gasPrice or maxFeePerGas/maxPriorityFeePerGas, not both");
  }
  if (maxFee !== undefined && tip !== undefined && tip > maxFee) {
    throw invalidParams("maxPriorityFeePerGas must not exceed maxFeePerGas");
  }
  if (type === 2 && gasPrice !== undefined)
    throw invalidParams("a type 2 transaction takes maxFeePerGas, not gasPrice");
  if (type !== undefined && type < 2 && (maxFee !== undefined || tip !== undefined)) {
    throw invalidParams(`a type ${type} transaction takes gasPrice, not maxFeePerGas`);
  }
  const fees: FeeChoice =
    gasPrice !== undefined
      ? { kind: "legacy", gasPrice }
      : maxFee !== undefined || tip !== undefined
        ? {
            kind: "eip1559",
            ...(maxFee === undefined ? {} : { maxFeePerGas: maxFee }),
            ...(tip === undefined ? {} : { maxPriorityFeePerGas: tip }),
          }
        : { kind: "auto", legacy: type !== undefined && type < 2 };
  const nonce = big(tx.nonce);
  if (nonce !== undefined && nonce > BigInt(Number.MAX_SAFE_INTEGER))
    throw invalidParams("nonce is too large");
  return {
    from: getAddress(tx.from),
    to,
    data,
    value: big(tx.value) ?? 0n,
    fees,
    ...(tx.gas === undefined ? {} : { gas: BigInt(tx.gas) }),
    ...(nonce === undefined ? {} : { nonce: Number(nonce) }),
    ...(tx.accessList === undefined
      ? {}
      : {
          accessList: tx.accessList.map((e) => ({
            address: getAddress(e.address),
            storageKeys: e.storageKeys as Hex[],
          })),
        }),
  };
}

/** Completes the caller's fee choice with the current fees (a partial EIP-1559 pair, or none at all). */
export function settleFees(choice: FeeChoice, current: Fees): Fees {
  if (choice.kind === "legacy") return { type: "legacy", gasPrice: choice.gasPrice };
  if (current.type === "legacy") {
    if (choice.kind === "eip1559") throw invalidParams("this chain has no base fee: use gasPrice");
    return current;
  }
  if (choice.kind === "auto") {
    // A legacy type on an EIP-1559 chain pays what a type 2 would at most.
    return choice.legacy ? { type: "legacy", gasPrice: current.maxFeePerGas } : current;
  }
  const tip = choice.maxPriorityFeePerGas ?? current.maxPriorityFeePerGas;
  const maxFee = choice.maxFeePerGas ?? current.baseFee * 2n + tip;
  return {
    type: "eip1559",
    baseFee: current.baseFee,
    maxFeePerGas: maxFee,
    maxPriorityFeePerGas: tip > maxFee ? maxFee : tip,
  };
}
