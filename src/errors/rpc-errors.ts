/** Constructors for the JSON-RPC errors every surface raises (codes and statuses from the catalogue). */
import { ChaingateError } from "./chaingate-error.js";

export function parseError(detail: string): ChaingateError {
  return new ChaingateError(`Parse error: ${detail}`, { code: "PARSE_ERROR" });
}

export function invalidRequest(detail: string): ChaingateError {
  return new ChaingateError(`Invalid request: ${detail}`, { code: "INVALID_REQUEST" });
}

export function methodNotFound(method: string): ChaingateError {
  return new ChaingateError(`Method not found: ${method}`, { code: "METHOD_NOT_FOUND" });
}

export function invalidParams(detail: string, data?: unknown): ChaingateError {
  return new ChaingateError(`Invalid params: ${detail}`, { code: "INVALID_PARAMS", data });
}

export function filterNotFound(): ChaingateError {
  return new ChaingateError("filter not found", { code: "FILTER_NOT_FOUND" });
}

export function unknownChain(chainId: string): ChaingateError {
  return new ChaingateError(`Unknown chain: ${chainId} is not configured`, { code: "UNKNOWN_CHAIN" });
}

/** An error answer from a node: a deterministic answer (revert, bad nonce), passed through as is. */
export class NodeRpcError extends ChaingateError {
  constructor(nodeCode: number, nodeMessage: string, nodeData: unknown) {
    super(nodeMessage, { code: "NODE_ERROR", rpcCode: nodeCode, data: nodeData });
    this.name = "NodeRpcError";
  }
}

/** The node could not be reached or answered with a fault; another upstream may answer. */
export function upstreamUnavailable(detail: string, cause?: unknown): ChaingateError {
  return new ChaingateError(`Upstream unavailable: ${detail}`, { code: "UPSTREAM_UNAVAILABLE", cause });
}
