/** Constructors for the JSON-RPC errors every surface raises (codes and statuses from the catalogue). */
import { decodeAbiParameters } from "viem";
import { ChaingateError } from "./chaingate-error.js";

export function parseError(detail: string): ChaingateError {
  return new ChaingateError(`Parse error: ${detail}`, { code: "PARSE_ERROR" });
}

export function invalidRequest(detail: string): ChaingateError {
  return new ChaingateError(`Invalid request: ${detail}`, { code: "INVALID_REQUEST" });
}

export function methodNotFound(method: string, meant?: string): ChaingateError {
  return new ChaingateError(
    meant === undefined
      ? `Method not found: ${method}`
      : `Method not found: ${method} (did you mean ${meant}?)`,
    { code: "METHOD_NOT_FOUND", ...(meant === undefined ? {} : { data: { did_you_mean: meant } }) },
  );
}

export function invalidParams(detail: string, data?: unknown): ChaingateError {
  return new ChaingateError(`Invalid params: ${detail}`, { code: "INVALID_PARAMS", data });
}

export function filterNotFound(): ChaingateError {
  return new ChaingateError("filter not found", { code: "FILTER_NOT_FOUND" });
}

export function unknownChain(chainId: string, configured?: readonly number[]): ChaingateError {
  return new ChaingateError(
    configured === undefined
      ? `Unknown chain: ${chainId} is not configured`
      : `Unknown chain: ${chainId} is not configured (configured: ${configured.join(", ")})`,
    {
      code: "UNKNOWN_CHAIN",
      ...(configured === undefined ? {} : { data: { configured_chains: configured } }),
    },
  );
}

/** An error answer from a node: a deterministic answer (revert, bad nonce), passed through as is. */
export class NodeRpcError extends ChaingateError {
  constructor(nodeCode: number, nodeMessage: string, nodeData: unknown) {
    super(nodeMessage, { code: "NODE_ERROR", rpcCode: nodeCode, data: nodeData });
    this.name = "NodeRpcError";
  }
}

/**
 * A revert as the execution-apis standard words it (code 3, "execution reverted[: reason]", the
 * revert data as hex), whatever shape the node gave it (Hardhat's -32603 with the data in an object,
 * Ganache's -32000 with a "VM Exception" message): every client library decodes this one.
 */
export function standardRevert(revertData: `0x${string}` | undefined): NodeRpcError {
  let reason: string | undefined;
  if (revertData?.startsWith(ERROR_STRING_SELECTOR)) {
    try {
      [reason] = decodeAbiParameters([{ type: "string" }], `0x${revertData!.slice(10)}`);
    } catch {
      reason = undefined;
    }
  }
  return new NodeRpcError(
    3,
    reason !== undefined ? `execution reverted: ${reason}` : "execution reverted",
    revertData,
  );
}

const ERROR_STRING_SELECTOR = "0x08c379a0";

/** The node could not be reached or answered with a fault; another upstream may answer. */
export function upstreamUnavailable(detail: string, cause?: unknown): ChaingateError {
  return new ChaingateError(`Upstream unavailable: ${detail}`, { code: "UPSTREAM_UNAVAILABLE", cause });
}

/** No upstream of the chain holds the state of the block a read asked for (every one is pruned past it). */
export function stateUnavailable(detail: string): ChaingateError {
  return new ChaingateError(`State unavailable: ${detail}`, { code: "STATE_UNAVAILABLE" });
}

/** A consensus asked of a call that cannot have one, or more upstreams than the chain has. */
export function invalidConsensus(detail: string): ChaingateError {
  return new ChaingateError(detail, { code: "INVALID_CONSENSUS" });
}

/**
 * Upstreams of one chain said different things where agreement was asked for (a consensus read, or
 * what a custody signature depends on); `data.upstreams` holds what each said.
 */
export function upstreamsDisagree(
  detail: string,
  upstreams: readonly { upstream: string; said: string }[],
): ChaingateError {
  return new ChaingateError(`Upstreams disagree: ${detail}`, {
    code: "UPSTREAMS_DISAGREE",
    data: { upstreams },
  });
}

/**
 * A method the node does not serve, whatever code it answered it with (Ganache's -32700, Hardhat's
 * -32004, geth's -32601): a client reads -32601 and the chain's name, not a parse error.
 */
export class MethodNotServedError extends ChaingateError {
  constructor(method: string, where: string, nodeCode: number, nodeMessage: string) {
    super(`Method not found: ${method} is not served by ${where}`, {
      code: "METHOD_NOT_SERVED",
      data: { node_code: nodeCode, node_message: nodeMessage },
    });
    this.name = "MethodNotServedError";
  }
}

/**
 * The node refused to work (HTTP 429, -32005 "limit exceeded", a provider's rate limit): nothing was
 * run, a send was not taken. A fault like any other, and counted against the node on sends too.
 */
export class UpstreamRateLimited extends ChaingateError {
  constructor(detail: string) {
    super(`Upstream unavailable: ${detail}`, { code: "UPSTREAM_UNAVAILABLE" });
    this.name = "UpstreamRateLimited";
  }
}
