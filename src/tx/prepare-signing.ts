/** What every signature needs before a nonce is taken (gas, fees, a synced ledger), and what the policy guard judges of it. */
import { invalidParams } from "../errors/rpc-errors.js";
import type { SigningRequest } from "../policies/policy-guard.js";
import { toRpcAuthorization } from "./authorizations.js";
import { estimateGas } from "./estimate-gas.js";
import type { FeeOracle, Fees } from "./fee-oracle.js";
import type { NonceLedger } from "./nonce-ledger.js";
import { authorizationsAt, type SignedOperation } from "./signed-operation.js";
import { asFault } from "./tx-errors.js";

export interface PrepareDeps {
  ledger: NonceLedger;
  fees: FeeOracle;
  /** Gas limit = estimate x (100 + margin) / 100. */
  gasMarginPercent: number;
}

/** What the policy guard judges: who signs what, with which gas and fees. */
export function signingRequest(
  op: SignedOperation,
  gas: bigint,
  fees: Fees,
  operation?: string,
): SigningRequest {
  const via = op.metadata?.via;
  return {
    apiKeyId: op.owner ?? null,
    walletId: op.walletId,
    address: op.account.address,
    chainId: op.chain.chainId,
    operation: operation ?? (typeof via === "string" ? via : op.kind),
    to: op.to,
    value: op.value,
    data: op.data,
    gas,
    feePerGas: fees.type === "eip1559" ? fees.maxFeePerGas : fees.gasPrice,
  };
}

/** Gas, fees and a synced ledger: what every signature needs before a nonce is taken. */
export async function prepareSigning(
  op: SignedOperation,
  deps: PrepareDeps,
): Promise<{ gas: bigint; fees: Fees }> {
  try {
    await deps.ledger.ensureSynced(op.chain, op.account.address);
  } catch (error) {
    throw asFault(error, "reading the account nonce");
  }
  // The call is estimated with the delegations it sets (the sender's own at the nonce it will likely get).
  const provisional =
    op.authorizations === undefined
      ? undefined
      : (await authorizationsAt(op, await deps.ledger.peek(op.chain.chainId, op.account.address))).map((e) =>
          toRpcAuthorization(e.authorization),
        );
  const gas =
    op.gas ??
    (await estimateGas(
      op.chain,
      {
        from: op.account.address,
        to: op.to,
        data: op.data,
        value: op.value,
        accessList: op.accessList,
        authorizationList: provisional,
      },
      deps.gasMarginPercent,
    ));
  let fees: Fees;
  try {
    fees = op.fees ?? (await deps.fees.get(op.chain));
  } catch (error) {
    throw asFault(error, "reading fees");
  }
  if (op.authorizations !== undefined && fees.type !== "eip1559")
    throw invalidParams(
      "a set-code transaction (type 4) needs EIP-1559 fees: give maxFeePerGas, not gasPrice",
    );
  return { gas, fees };
}
