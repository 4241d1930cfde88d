/** Errors of the transaction pipeline, translated from node answers where they enter our code. */
import { decodeErrorResult, type Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { classifyNodeError } from "../errors/node-errors.js";
import type { NodeRpcError } from "../errors/rpc-errors.js";

/** JSON-RPC codes for pipeline failures inside envelopes (token and member operations). */
export const RPC_TX_REJECTED = -32010;
export const RPC_TX_UNAVAILABLE = -32011;

/** The revert reason of an Error(string) or Panic(uint256) payload, when it is one. */
export function revertReason(data: unknown): string | undefined {
  if (typeof data !== "string" || !data.startsWith("0x") || data.length < 10) return undefined;
  try {
    const decoded = decodeErrorResult({ data: data as Hex });
    return decoded.errorName === "Error"
      ? String(decoded.args?.[0])
      : `${decoded.errorName}(${decoded.args?.join(", ")})`;
  } catch {
    return undefined;
  }
}

/** Why a transaction cannot be built: the node's answer to the estimate, as a 422 with its data. */
export function estimationFailed(error: NodeRpcError): ChaingateError {
  if (classifyNodeError(error.message) === "insufficient_funds") {
    return new ChaingateError(`Insufficient funds: ${error.message}`, {
      code: "INSUFFICIENT_FUNDS",
      status: 422,
      rpcCode: RPC_TX_REJECTED,
      data: { node_code: error.rpcCode, node_message: error.message },
    });
  }
  const reason = revertReason(error.data);
  const reverted = error.rpcCode === 3 || /revert/i.test(error.message);
  return new ChaingateError(
    reverted ? `Execution reverted${reason ? `: ${reason}` : ""}` : `Estimation failed: ${error.message}`,
    {
      code: reverted ? "EXECUTION_REVERTED" : "ESTIMATION_FAILED",
      status: 422,
      rpcCode: RPC_TX_REJECTED,
      data: {
        node_code: error.rpcCode,
        node_message: error.message,
        ...(reason ? { reason } : {}),
        ...(error.data === undefined ? {} : { revert_data: error.data }),
      },
    },
  );
}

/** The node refused the signed transaction for a reason another send would not change. */
export function sendRejected(error: NodeRpcError): ChaingateError {
  const funds = classifyNodeError(error.message) === "insufficient_funds";
  return new ChaingateError(`${funds ? "Insufficient funds" : "Transaction rejected"}: ${error.message}`, {
    code: funds ? "INSUFFICIENT_FUNDS" : "TRANSACTION_REJECTED",
    status: 422,
    rpcCode: RPC_TX_REJECTED,
    data: { node_code: error.rpcCode, node_message: error.message },
  });
}

export function nodeUnavailable(detail: string, data?: Record<string, unknown>): ChaingateError {
  return new ChaingateError(`Node unavailable: ${detail}`, {
    code: "NODE_UNAVAILABLE",
    status: 503,
    rpcCode: RPC_TX_UNAVAILABLE,
    retryable: true,
    ...(data ? { data } : {}),
  });
}

export const isNonceConflict = (e: NodeRpcError): boolean =>
  classifyNodeError(e.message) === "nonce_conflict";
export const isAlreadyKnown = (e: NodeRpcError): boolean => classifyNodeError(e.message) === "already_known";

/** A client's own nonce that is not the ledger's next: sending it would wait behind a gap or collide. */
export function nonceNotNext(given: number, next: number): ChaingateError {
  return new ChaingateError(
    `nonce ${given} is not this account's next nonce (${next}); leave nonce out and chaingate assigns it`,
    {
      code: given < next ? "NONCE_TOO_LOW" : "NONCE_TOO_HIGH",
      status: 409,
      rpcCode: RPC_TX_REJECTED,
      data: { given, next },
    },
  );
}
