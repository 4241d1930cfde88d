/** JSON-RPC codes chaingate answers with, and the shape of one entry of the error catalogue (codes.ts). */

/** JSON-RPC error codes: the standard ones, and the server range (-32000 to -32099) chaingate uses. */
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
/** geth's generic server error ("filter not found", "unknown account"): clients match its text. */
export const RPC_SERVER_ERROR = -32000;
export const RPC_WRONG_PASSWORD = -32001;
export const RPC_WALLET_NOT_FOUND = -32004;
/** A limit was reached (EIP-1474's "limit exceeded"). */
export const RPC_LIMIT_EXCEEDED = -32005;
/** The transaction (or operation) was refused: revert, funds, nonce. */
export const RPC_TX_REJECTED = -32010;
/** A dependency (node, store, system contracts) is unavailable: retry later. */
export const RPC_UNAVAILABLE = -32011;
export const RPC_ADMIN_REQUIRED = -32012;
export const RPC_METHOD_DENIED = -32013;
/** EIP-7966: a synchronous send's transaction was not mined within the timeout. */
export const RPC_SYNC_TIMEOUT = 4;
/** EIP-7966: a synchronous send's transaction is pooled but cannot be mined yet (a nonce gap). */
export const RPC_SYNC_NOT_READY = 5;
/** EIP-5792's wallet_sendCalls / wallet_getCallsStatus errors. */
export const RPC_UNSUPPORTED_CAPABILITY = 5700;
export const RPC_UNSUPPORTED_CHAIN_ID = 5710;
export const RPC_DUPLICATE_BUNDLE_ID = 5720;
export const RPC_UNKNOWN_BUNDLE_ID = 5730;
export const RPC_BUNDLE_TOO_LARGE = 5740;
export const RPC_ATOMICITY_NOT_SUPPORTED = 5760;
/** The positive codes: only where a standard (EIP-7966, EIP-5792) gives one; everything else is negative. */
export const STANDARD_POSITIVE_CODES: ReadonlySet<number> = new Set([
  RPC_SYNC_TIMEOUT,
  RPC_SYNC_NOT_READY,
  RPC_UNSUPPORTED_CAPABILITY,
  RPC_UNSUPPORTED_CHAIN_ID,
  RPC_DUPLICATE_BUNDLE_ID,
  RPC_UNKNOWN_BUNDLE_ID,
  RPC_BUNDLE_TOO_LARGE,
  RPC_ATOMICITY_NOT_SUPPORTED,
]);
/** EIP-1474's "transaction rejected": a signing policy refused the request. */
export const RPC_POLICY_DENIED = -32003;

export interface ErrorCodeEntry {
  /** HTTP status of the problem body; for start-up and CLI codes, what an HTTP answer would be. */
  status: number;
  /** JSON-RPC `error.code` inside envelopes; none for codes only ever answered as HTTP refusals. */
  rpc?: number;
  /** The client may repeat the same request later and it may then succeed (`retryable` in answers). */
  retry?: true;
  /** Another upstream may answer the same call: the pool fails over to the next one. */
  failover?: true;
  /** Where the code shows when it is not an answer to a request. */
  at?: "start-up" | "CLI";
  /** A second status the same code has: what it means is in `meaning`. */
  alsoStatus?: number;
  /** One line for the error index in docs/api.md. */
  meaning: string;
}

export const BAD = { status: 400, rpc: RPC_INVALID_PARAMS } as const;
export const LIMIT = { status: 413, rpc: RPC_LIMIT_EXCEEDED } as const;
export const REJECTED = { status: 422, rpc: RPC_TX_REJECTED } as const;
export const START = { status: 500, at: "start-up" } as const;
