/** The standard transaction object of eth_sendTransaction / eth_signTransaction, read into the pipeline's terms. */
import { getAddress, type Hex } from "viem";
import { invalidParams } from "../errors/rpc-errors.js";
import type { AuthorizationItem } from "../tx/authorizations.js";
import type { CallFields } from "../tx/call-fields.js";
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

export interface TransactionRequest extends CallFields {
  /** What the caller fixed about fees; the rest comes from the fee oracle. */
  fees: FeeChoice;
  /** EIP-7702 authorizations: signed ones as given, and requests custody signs. */
  authorizations?: AuthorizationItem[];
}

const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,63})$/;
const WORD = /^0x[0-9a-fA-F]{1,64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * `authorizationList` entries: the JSON-RPC form (chainId, address, nonce, yParity, r, s) is taken
 * as signed; an entry without a signature asks custody to sign it, `address` (or viem's
 * `contractAddress`) naming the delegate and `authority` the signing custody address.
 */
export function readAuthorizationList(list: readonly unknown[]): AuthorizationItem[] {
  if (list.length > 16) throw invalidParams("authorizationList: at most 16 entries");
  return list.map((raw, i) => {
    const at = `authorizationList[${i}]`;
    if (raw === null || typeof raw !== "object") throw invalidParams(`${at} must be an object`);
    const e = raw as Record<string, unknown>;
    const quantity = (field: string, required: boolean): number | undefined => {
      const v = e[field];
      if (v === undefined && !required) return undefined;
      if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
      if (typeof v !== "string" || !QUANTITY.test(v))
        throw invalidParams(`${at}.${field} must be a hex quantity`);
      const n = BigInt(v);
      if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidParams(`${at}.${field} is too large`);
      return Number(n);
    };
    const address = (field: string): Hex | undefined => {
      const v = e[field];
      if (v === undefined) return undefined;
      if (typeof v !== "string" || !ADDRESS.test(v)) throw invalidParams(`${at}.${field} must be an address`);
      return getAddress(v);
    };
    const delegate = address("address") ?? address("contractAddress");
    if (delegate === undefined) throw invalidParams(`${at}.address (the delegate contract) is required`);
    if (e.r !== undefined || e.s !== undefined) {
      for (const field of ["r", "s"] as const)
        if (typeof e[field] !== "string" || !WORD.test(e[field] as string))
          throw invalidParams(`${at}.${field} must be a 32-byte hex value`);
      const yParity = quantity("yParity", false) ?? (quantity("v", true)! === 28 ? 1 : 0);
      if (yParity > 1) throw invalidParams(`${at}.yParity must be 0x0 or 0x1`);
      return {
        kind: "signed",
        authorization: {
          address: delegate,
          chainId: quantity("chainId", true)!,
          nonce: quantity("nonce", true)!,
          yParity,
          r: e.r as Hex,
          s: e.s as Hex,
        },
      };
    }
    const chainId = quantity("chainId", false);
    const nonce = quantity("nonce", false);
    const authority = address("authority");
    return {
      kind: "request",
      delegate,
      ...(chainId === undefined ? {} : { chainId }),
      ...(nonce === undefined ? {} : { nonce }),
      ...(authority === undefined ? {} : { authority }),
    };
  });
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
  const type = tx.type === undefined ? undefined : Number(BigInt(tx.type));
  if (type !== undefined && type !== 4 && type > 2)
    throw invalidParams(`transaction type ${tx.type} is not supported (0, 1, 2 or 4)`);
  if (type === 4 && (tx.authorizationList === undefined || tx.authorizationList.length === 0))
    throw invalidParams("a type 4 transaction needs a non-empty authorizationList");
  const authorizations =
    tx.authorizationList === undefined ? undefined : readAuthorizationList(tx.authorizationList);
  if (authorizations !== undefined && tx.gasPrice !== undefined)
    throw invalidParams("a set-code transaction (type 4) takes maxFeePerGas, not gasPrice");
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
    ...(authorizations === undefined ? {} : { authorizations }),
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
