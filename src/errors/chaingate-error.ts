/** The single error root: every error chaingate raises or translates carries a code from the catalogue. */
import { ERROR_CODES, type ErrorCode, RPC_INTERNAL_ERROR } from "./codes.js";

export interface ChaingateErrorOptions {
  /** Stable machine-readable code from `codes.ts`; its statuses and retry flags come from there. */
  code: ErrorCode;
  /** Safe, client-visible extra data (never secrets). */
  data?: unknown;
  cause?: unknown;
  /**
   * Only where the answer carries another party's status: Fastify's own 4xx, a revert of our
   * contracts (422), a replayed stored answer, or a code's `alsoStatus`. Anything else takes the
   * catalogue's.
   */
  status?: number;
  /** Only for a node's own JSON-RPC code (NodeRpcError) and reverts answered as -32010. */
  rpcCode?: number;
  /** Only for replayed answers, which keep the flag they were first answered with. */
  retryable?: boolean;
}

export class ChaingateError extends Error {
  readonly code: ErrorCode;
  /** The client may repeat the same request later and it may succeed. */
  readonly retryable: boolean;
  /** Another upstream may answer the same call: the upstream pool fails over. */
  readonly failover: boolean;
  readonly status: number;
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(message: string, options: ChaingateErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const entry: { status: number; rpc?: number; retry?: boolean; failover?: boolean } =
      ERROR_CODES[options.code];
    this.name = "ChaingateError";
    this.code = options.code;
    this.retryable = options.retryable ?? entry.retry ?? false;
    this.failover = entry.failover ?? false;
    this.status = options.status ?? entry.status;
    this.rpcCode = options.rpcCode ?? entry.rpc ?? RPC_INTERNAL_ERROR;
    this.data = options.data;
  }
}

export function isChaingateError(error: unknown): error is ChaingateError {
  return error instanceof ChaingateError;
}

/** A request that cannot be served as sent (its code's entry says 400 / -32602). */
export function badRequest(code: ErrorCode, message: string): ChaingateError {
  return new ChaingateError(message, { code });
}
