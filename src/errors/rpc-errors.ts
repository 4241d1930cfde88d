/** JSON-RPC error constructors with the standard codes (and node errors passed through unchanged). */
import { ChaingateError } from "./chaingate-error.js";

export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
/** Server-defined range; geth uses -32000 for "filter not found" and similar, clients match on it. */
export const RPC_SERVER_ERROR = -32000;

export function parseError(detail: string): ChaingateError {
  return new ChaingateError(`Parse error: ${detail}`, {
    code: "PARSE_ERROR",
    rpcCode: RPC_PARSE_ERROR,
    status: 400,
  });
}

export function invalidRequest(detail: string): ChaingateError {
  return new ChaingateError(`Invalid request: ${detail}`, {
    code: "INVALID_REQUEST",
    rpcCode: RPC_INVALID_REQUEST,
    status: 400,
  });
}

export function methodNotFound(method: string): ChaingateError {
  return new ChaingateError(`Method not found: ${method}`, {
    code: "METHOD_NOT_FOUND",
    rpcCode: RPC_METHOD_NOT_FOUND,
    status: 404,
  });
}

export function invalidParams(detail: string, data?: unknown): ChaingateError {
  return new ChaingateError(`Invalid params: ${detail}`, {
    code: "INVALID_PARAMS",
    rpcCode: RPC_INVALID_PARAMS,
    status: 400,
    data,
  });
}

export function filterNotFound(): ChaingateError {
  return new ChaingateError("filter not found", {
    code: "FILTER_NOT_FOUND",
    rpcCode: RPC_SERVER_ERROR,
    status: 404,
  });
}

export function unknownChain(chainId: string): ChaingateError {
  return new ChaingateError(`Unknown chain: ${chainId} is not configured`, {
    code: "UNKNOWN_CHAIN",
    rpcCode: RPC_INVALID_REQUEST,
    status: 400,
  });
}

/** An error answer from a node: a deterministic answer (revert, bad nonce), passed through as is. */
export class NodeRpcError extends ChaingateError {
  constructor(nodeCode: number, nodeMessage: string, nodeData: unknown) {
    super(nodeMessage, {
      code: "NODE_ERROR",
      rpcCode: nodeCode,
      status: 502,
      data: nodeData,
      retryable: false,
    });
    this.name = "NodeRpcError";
  }
}

/** The node could not be reached or answered with a fault; safe to retry elsewhere. */
export function upstreamUnavailable(detail: string, cause?: unknown): ChaingateError {
  return new ChaingateError(`Upstream unavailable: ${detail}`, {
    code: "UPSTREAM_UNAVAILABLE",
    rpcCode: RPC_INTERNAL_ERROR,
    status: 503,
    retryable: true,
    cause,
  });
}
