/** What the pipeline signs: the operation, its signature at a nonce (types 0, 1, 2 and 4), and the queued row that stores it. */
import type { AccessList, Hex, LocalAccount, TransactionSerializable } from "viem";
import { keccak256OfHex } from "../keys/keccak.js";
import { rowId } from "../store/row-id.js";
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import {
  type AuthorizationEntry,
  type AuthorizationPlan,
  signAuthorizationWith,
  storedAuthorizations,
} from "./authorizations.js";
import type { Fees } from "./fee-oracle.js";

export interface SignedOperation {
  chain: Chain;
  account: LocalAccount;
  walletId: string | null;
  addressIndex: number | null;
  /** null deploys `data` as a contract. */
  to: Hex | null;
  data: Hex;
  value: bigint;
  kind: string;
  metadata?: Record<string, unknown>;
  /** The transport this transaction sends, delivers, cancels or refunds (its own indexed column). */
  transportId?: string;
  owner?: string | null;
  /** A fixed gas limit skips estimation (fillers, replacements, a client's own `gas`). */
  gas?: bigint;
  /** Fees the caller chose (eth_sendTransaction); absent: the fee oracle's. */
  fees?: Fees;
  /** The caller's own nonce: accepted only when it is the ledger's next one. */
  nonce?: number;
  /** EIP-2930 access list; with legacy fees it makes a type-1 transaction. */
  accessList?: AccessList;
  /** EIP-7702 authorizations: the transaction is type 4 (EIP-1559 fees only). */
  authorizations?: AuthorizationPlan;
  /**
   * The Idempotency-Key reference the request runs under, stored with the row so a crash is resolved
   * from the rows (IdempotencyStore.once hands it to the operation).
   */
  idempotencyRef?: string | undefined;
  /** The W3C traceparent of the span it is signed in (tracing on), stored with its row. */
  traceParent?: string | null;
}

/** The authorizations a transaction at `nonce` carries: the signed ones, and the sender's own at nonce + 1. */
export async function authorizationsAt(op: SignedOperation, nonce: number): Promise<AuthorizationEntry[]> {
  const plan = op.authorizations;
  if (plan === undefined) return [];
  if (plan.self === undefined) return plan.signed;
  const own = await signAuthorizationWith(op.account, { ...plan.self, nonce: nonce + 1 });
  return [...plan.signed, { authority: op.account.address, authorization: own }];
}

/** The signed bytes of `op` at `nonce`: legacy, EIP-2930, EIP-1559, or EIP-7702 with authorizations. */
export async function signOperation(
  op: SignedOperation,
  gas: bigint,
  fees: Fees,
  nonce: number,
  authorizations?: AuthorizationEntry[],
): Promise<Hex> {
  const authorizationList = (authorizations ?? (await authorizationsAt(op, nonce))).map(
    (e) => e.authorization,
  );
  // Written out field by field, not spread from a shared base: V8 (Node 20) builds `{ ...o, more }`
  // through a slow path, 4-5 µs a signed transaction here (decisions 170, 217).
  const to = op.to === null ? undefined : op.to;
  const tx: TransactionSerializable =
    fees.type === "eip1559"
      ? authorizationList.length > 0
        ? {
            type: "eip7702",
            chainId: op.chain.chainId,
            nonce,
            gas,
            value: op.value,
            data: op.data,
            to,
            accessList: op.accessList,
            maxFeePerGas: fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
            authorizationList,
          }
        : {
            type: "eip1559",
            chainId: op.chain.chainId,
            nonce,
            gas,
            value: op.value,
            data: op.data,
            to,
            accessList: op.accessList,
            maxFeePerGas: fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          }
      : op.accessList === undefined
        ? {
            type: "legacy",
            chainId: op.chain.chainId,
            nonce,
            gas,
            value: op.value,
            data: op.data,
            to,
            gasPrice: fees.gasPrice,
          }
        : {
            type: "eip2930",
            chainId: op.chain.chainId,
            nonce,
            gas,
            value: op.value,
            data: op.data,
            to,
            gasPrice: fees.gasPrice,
            accessList: op.accessList,
          };
  return op.account.signTransaction!(tx);
}

/** The row that stores `op` signed at `nonce`, queued (the bytes are stored before any broadcast). */
export function queuedRow(
  op: SignedOperation,
  signed: {
    gas: bigint;
    fees: Fees;
    nonce: number;
    raw: Hex;
    authorizations: AuthorizationEntry[];
    replaces: string | null;
    now: number;
  },
): TransactionsTable {
  const { gas, fees, nonce, raw, authorizations, replaces, now } = signed;
  const metadata =
    authorizations.length === 0
      ? op.metadata
      : { ...op.metadata, authorizations: storedAuthorizations(authorizations) };
  return {
    id: rowId(now),
    kind: op.kind,
    chain_id: op.chain.chainId,
    wallet_id: op.walletId,
    address_index: op.addressIndex,
    from_address: op.account.address,
    to_address: op.to,
    value: op.value.toString(),
    data: op.data,
    nonce,
    gas_limit: gas.toString(),
    max_fee_per_gas: fees.type === "eip1559" ? fees.maxFeePerGas.toString() : null,
    max_priority_fee_per_gas: fees.type === "eip1559" ? fees.maxPriorityFeePerGas.toString() : null,
    gas_price: fees.type === "legacy" ? fees.gasPrice.toString() : null,
    raw,
    tx_hash: keccak256OfHex(raw),
    state: "queued",
    replaced_by: null,
    replaces,
    block_number: null,
    block_hash: null,
    error: null,
    revert_data: null,
    broadcasts: 0,
    metadata: metadata ? JSON.stringify(metadata) : null,
    owner: op.owner ?? null,
    created_at: now,
    updated_at: now,
    sent_at: null,
    // Fillers and replacements are the gateway's own; the request's key names what it asked for.
    idempotency_ref: op.kind === "filler" || replaces !== null ? null : (op.idempotencyRef ?? null),
    transport_id: op.transportId ?? null,
    trace_parent: op.traceParent ?? null,
  };
}
