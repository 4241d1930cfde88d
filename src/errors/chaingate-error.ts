/** The single error root: every error chaingate raises or translates carries a stable code. */

export interface ChaingateErrorOptions {
  /** Stable machine-readable code, e.g. `UPSTREAM_UNAVAILABLE`. Never changes once published. */
  code: string;
  /** Whether repeating the same request may succeed (used by failover and surfaced to clients). */
  retryable?: boolean;
  /** HTTP status for problem-style routes (wallets, /transaction). */
  status?: number;
  /** JSON-RPC error code for envelope-style routes. */
  rpcCode?: number;
  /** Safe, client-visible extra data (never secrets). */
  data?: unknown;
  cause?: unknown;
}

export class ChaingateError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly status: number;
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(message: string, options: ChaingateErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ChaingateError";
    this.code = options.code;
    this.retryable = options.retryable ?? false;
    this.status = options.status ?? 500;
    this.rpcCode = options.rpcCode ?? -32603;
    this.data = options.data;
  }
}

export function isChaingateError(error: unknown): error is ChaingateError {
  return error instanceof ChaingateError;
}

/** A request that cannot be served as sent: HTTP 400 in problem bodies, -32602 inside JSON-RPC envelopes. */
export function badRequest(code: string, message: string): ChaingateError {
  return new ChaingateError(message, { code, status: 400, rpcCode: -32602 });
}
