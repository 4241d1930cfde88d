/** Errors of the transaction pipeline, translated from node answers where they enter our code. */
import { type Abi, decodeErrorResult, type Hex } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { classifyNodeError, revertDataOf } from "../errors/node-errors.js";
import type { NodeRpcError } from "../errors/rpc-errors.js";

/** Solidity's panic codes (the compiler's own list), in words. */
const PANICS: Record<number, string> = {
  0: "generic compiler panic",
  1: "assertion failed",
  17: "arithmetic overflow or underflow",
  18: "division or modulo by zero",
  33: "conversion to an invalid enum value",
  34: "incorrectly encoded storage byte array",
  49: "pop() on an empty array",
  50: "array index out of bounds",
  65: "out of memory (too large an allocation)",
  81: "call to an uninitialised function pointer",
};

/**
 * Revert data in words: `Error(string)` as its text, `Panic(uint256)` with the compiler's meaning,
 * a custom error of `abi` by name and arguments, any other custom error by its selector.
 */
export function revertReason(data: unknown, abi: Abi = []): string | undefined {
  if (typeof data !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(data)) return undefined;
  if (data.length < 10) return data.length === 2 ? undefined : `malformed revert data ${data}`;
  try {
    const decoded = decodeErrorResult({ abi, data: data as Hex });
    const args = decoded.args ?? [];
    if (decoded.errorName === "Error") return String(args[0]);
    if (decoded.errorName === "Panic") {
      const code = Number(args[0]);
      return `panic 0x${code.toString(16).padStart(2, "0")}: ${PANICS[code] ?? "unknown panic code"}`;
    }
    return `${decoded.errorName}(${args.map(String).join(", ")})`;
  } catch {
    return `custom error ${data.slice(0, 10)} (undecoded; see revert_data)`;
  }
}

/** Why a transaction cannot be built: the node's answer to the estimate, as a 422 with its data. */
export function estimationFailed(error: NodeRpcError): ChaingateError {
  if (kindOf(error) === "insufficient_funds") {
    return new ChaingateError(`Insufficient funds: ${error.message}`, {
      code: "INSUFFICIENT_FUNDS",
      data: { node_code: error.rpcCode, node_message: error.message },
    });
  }
  const data = revertDataOf(error.data);
  const reason = revertReason(data);
  const reverted = kindOf(error) === "reverted";
  return new ChaingateError(
    reverted ? `Execution reverted${reason ? `: ${reason}` : ""}` : `Estimation failed: ${error.message}`,
    {
      code: reverted ? "EXECUTION_REVERTED" : "ESTIMATION_FAILED",
      data: {
        node_code: error.rpcCode,
        node_message: error.message,
        ...(reason ? { reason } : {}),
        ...(data === undefined ? {} : { revert_data: data }),
      },
    },
  );
}

/** Found before signing: the address holds less than the value it is asked to send. */
export function insufficientFunds(balance: bigint, value: bigint): ChaingateError {
  return new ChaingateError(`Insufficient funds: the balance is ${balance} wei, the value ${value} wei`, {
    code: "INSUFFICIENT_FUNDS",
    data: { balance: balance.toString(), value: value.toString() },
  });
}

/** The node refused the signed transaction for a reason another send would not change. */
export function sendRejected(error: NodeRpcError): ChaingateError {
  const funds = kindOf(error) === "insufficient_funds";
  return new ChaingateError(`${funds ? "Insufficient funds" : "Transaction rejected"}: ${error.message}`, {
    code: funds ? "INSUFFICIENT_FUNDS" : "TRANSACTION_REJECTED",
    data: { node_code: error.rpcCode, node_message: error.message },
  });
}

export function nodeUnavailable(detail: string): ChaingateError {
  return new ChaingateError(`Node unavailable: ${detail}`, { code: "NODE_UNAVAILABLE" });
}

/**
 * Signed and stored, but no node has taken it (yet): the tracker sends the stored bytes. Whatever
 * answered this request must never sign it again, so an Idempotency-Key keeps this answer.
 */
export class SignedNotSentError extends ChaingateError {
  constructor(detail: string, row: { id: string; tx_hash: string }) {
    super(`Node unavailable: ${detail}`, {
      code: "NODE_UNAVAILABLE",
      data: { id: row.id, tx_hash: row.tx_hash, state: "queued" },
    });
    this.name = "SignedNotSentError";
  }
}

export const isSignedButNotSent = (error: unknown): error is SignedNotSentError =>
  error instanceof SignedNotSentError;

/** What a node's answer says of a sent transaction (codes, then every implementation's wording). */
export const kindOf = (e: NodeRpcError) => classifyNodeError(e.message, e.rpcCode, e.data);
/** The nonce is taken: mined already, or held by another pooled transaction of the sender. */
export const isNonceConflict = (e: NodeRpcError): boolean => {
  const kind = kindOf(e);
  return kind === "nonce_too_low" || kind === "replacement_underpriced";
};
export const isAlreadyKnown = (e: NodeRpcError): boolean => kindOf(e) === "already_known";

/** A client's own nonce that is not the ledger's next: sending it would wait behind a gap or collide. */
export function nonceNotNext(given: number, next: number): ChaingateError {
  return new ChaingateError(
    `nonce ${given} is not this account's next nonce (${next}); leave nonce out and chaingate assigns it`,
    {
      code: given < next ? "NONCE_TOO_LOW" : "NONCE_TOO_HIGH",
      data: { given, next },
    },
  );
}

/** A failure met while preparing a signature: our own non-retryable refusals and store faults stay, anything else is the node's. */
export function asFault(error: unknown, doing: string): ChaingateError {
  if (
    error instanceof ChaingateError &&
    (!error.retryable || error.code === "STORE_UNAVAILABLE" || error.code === "UPSTREAMS_DISAGREE")
  )
    return error;
  return nodeUnavailable(`${doing}: ${(error as Error).message}`);
}
