/** eth_fillTransaction for a custody address: the ledger's next nonce, the oracle's fees, the margin's gas and the policy's dry run. */
import {
  type Hex,
  keccak256,
  type SignedAuthorization,
  serializeTransaction,
  type TransactionSerializable,
} from "viem";
import { invalidParams } from "../errors/rpc-errors.js";
import type { Denial } from "../policies/evaluate-policy.js";
import type { PolicyGuard } from "../policies/policy-guard.js";
import type { Chain } from "../upstream/chain-registry.js";
import { toRpcAuthorization } from "./authorizations.js";
import type { CallFields } from "./call-fields.js";
import { estimateGas } from "./estimate-gas.js";
import type { FeeOracle, Fees } from "./fee-oracle.js";
import type { NonceLedger } from "./nonce-ledger.js";
import { asFault } from "./tx-errors.js";

/** What the caller fixed; the rest is filled. */
export interface FillRequest extends CallFields {
  chain: Chain;
  /** The caller's fee choice settled against the oracle (see settleFees), or the oracle's own. */
  fees?: Fees;
  /** Authorizations signed already (eth_signAuthorization, or the caller's own): a type-4 transaction. */
  authorizationList?: SignedAuthorization[];
  /** Who would sign: the policies that apply are the wallet's and the key's. */
  walletId: string;
  owner: string | null;
}

/** The answer geth and anvil give (`raw` unsigned, `tx` as a transaction object), plus chaingate's policy decision. */
export interface FilledTransaction {
  raw: Hex;
  tx: Record<string, unknown>;
  policy: { allowed: true } | { allowed: false; rule: string; policy_id: string; reason: string };
}

export interface FillerOptions {
  ledger: NonceLedger;
  fees: FeeOracle;
  guard: PolicyGuard;
  gasMarginPercent: number;
}

const hex = (n: bigint | number): Hex => `0x${n.toString(16)}`;

export class TransactionFiller {
  constructor(private readonly options: FillerOptions) {}

  /**
   * The nonce is the ledger's next, not the node's: transactions chaingate has queued or sent but
   * the node has not counted yet are already in it, so a client that signs or sends with this
   * nonce does not collide with them.
   */
  async fill(request: FillRequest): Promise<FilledTransaction> {
    const { chain, from } = request;
    const { ledger, fees: oracle, guard } = this.options;
    const authorizationList = request.authorizationList?.map(toRpcAuthorization);
    const gas =
      request.gas ??
      (await estimateGas(
        chain,
        {
          from,
          to: request.to,
          data: request.data,
          value: request.value,
          accessList: request.accessList,
          authorizationList,
        },
        this.options.gasMarginPercent,
      ));
    let fees: Fees;
    let nonce: number;
    try {
      fees = request.fees ?? (await oracle.get(chain));
      if (request.nonce !== undefined) nonce = request.nonce;
      else {
        await ledger.ensureSynced(chain, from);
        nonce = await ledger.peek(chain.chainId, from);
      }
    } catch (error) {
      throw asFault(error, "reading fees and the account nonce");
    }
    if (authorizationList !== undefined && fees.type !== "eip1559")
      throw invalidParams(
        "a set-code transaction (type 4) needs EIP-1559 fees: give maxFeePerGas, not gasPrice",
      );
    const denial = await guard.judge({
      apiKeyId: request.owner,
      walletId: request.walletId,
      address: from,
      chainId: chain.chainId,
      operation: "eth_sendTransaction",
      to: request.to,
      value: request.value,
      data: request.data,
      gas,
      feePerGas: fees.type === "eip1559" ? fees.maxFeePerGas : fees.gasPrice,
    });
    const unsigned = serializable(request, gas, fees, nonce);
    const raw = serializeTransaction(unsigned);
    return { raw, tx: transactionObject(request, unsigned, raw), policy: decision(denial) };
  }
}

function serializable(request: FillRequest, gas: bigint, fees: Fees, nonce: number): TransactionSerializable {
  const base = {
    chainId: request.chain.chainId,
    nonce,
    gas,
    value: request.value,
    data: request.data,
    ...(request.to === null ? {} : { to: request.to }),
  };
  if (fees.type === "eip1559" && request.authorizationList !== undefined)
    return {
      ...base,
      type: "eip7702",
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      accessList: request.accessList ?? [],
      authorizationList: request.authorizationList,
    };
  if (fees.type === "eip1559")
    return {
      ...base,
      type: "eip1559",
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      accessList: request.accessList ?? [],
    };
  return request.accessList === undefined
    ? { ...base, type: "legacy", gasPrice: fees.gasPrice }
    : { ...base, type: "eip2930", gasPrice: fees.gasPrice, accessList: request.accessList };
}

/** The transaction object clients read (viem's fillTransaction takes `tx`), in the node's field names. */
function transactionObject(
  request: FillRequest,
  tx: TransactionSerializable,
  raw: Hex,
): Record<string, unknown> {
  const type = tx.type === "eip7702" ? 4 : tx.type === "eip1559" ? 2 : tx.type === "eip2930" ? 1 : 0;
  return {
    type: hex(type),
    chainId: hex(request.chain.chainId),
    from: request.from.toLowerCase(),
    to: request.to?.toLowerCase() ?? null,
    nonce: hex(tx.nonce ?? 0),
    gas: hex(tx.gas ?? 0n),
    value: hex(request.value),
    input: request.data,
    ...(tx.type === "eip1559" || tx.type === "eip7702"
      ? { maxFeePerGas: hex(tx.maxFeePerGas ?? 0n), maxPriorityFeePerGas: hex(tx.maxPriorityFeePerGas ?? 0n) }
      : { gasPrice: hex(tx.gasPrice ?? 0n) }),
    ...(type === 0 ? {} : { accessList: request.accessList ?? [] }),
    ...(request.authorizationList === undefined
      ? {}
      : { authorizationList: request.authorizationList.map(toRpcAuthorization) }),
    // The hash the unsigned bytes have; the signed transaction's differs.
    hash: keccak256(raw),
  };
}

function decision(denial: Denial | undefined): FilledTransaction["policy"] {
  return denial === undefined
    ? { allowed: true }
    : { allowed: false, rule: denial.rule, policy_id: denial.policyId, reason: denial.reason };
}
