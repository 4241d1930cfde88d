/** The error catalogue: every stable code chaingate answers or stops with, its statuses and retry flags. */

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

const BAD = { status: 400, rpc: RPC_INVALID_PARAMS } as const;
const LIMIT = { status: 413, rpc: RPC_LIMIT_EXCEEDED } as const;
const REJECTED = { status: 422, rpc: RPC_TX_REJECTED } as const;
const START = { status: 500, at: "start-up" } as const;

/** Grouped by where a reader meets them; docs/api.md's index is written from this table (`npm run docs:errors`). */
export const ERROR_CODES = {
  // JSON-RPC and HTTP framing
  PARSE_ERROR: {
    status: 400,
    rpc: RPC_PARSE_ERROR,
    meaning: "the body is not JSON, or is nested deeper than 64 levels",
  },
  INVALID_REQUEST: {
    status: 400,
    rpc: RPC_INVALID_REQUEST,
    meaning: 'not a JSON-RPC request (see "Errors on JSON-RPC surfaces")',
  },
  METHOD_NOT_FOUND: {
    status: 404,
    rpc: RPC_METHOD_NOT_FOUND,
    meaning: "unknown method, or a `POST` to an unknown path",
  },
  INVALID_PARAMS: {
    ...BAD,
    meaning: "params do not fit the method; the message names its shape and the offending param",
  },
  VALIDATION_FAILED: { ...BAD, meaning: "a REST body does not fit its schema; `errors` lists each problem" },
  INVALID_JSON: { status: 400, rpc: RPC_INVALID_REQUEST, meaning: "a REST body is empty or not JSON" },
  INVALID_CONTENT_LENGTH: {
    status: 400,
    rpc: RPC_INVALID_REQUEST,
    meaning: "`Content-Length` does not match the body",
  },
  BAD_REQUEST: {
    status: 400,
    rpc: RPC_INVALID_REQUEST,
    meaning: "any other request HTTP itself refuses (status as Fastify gives it)",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    rpc: RPC_INVALID_REQUEST,
    meaning: "a REST body labelled other than JSON; send `Content-Type: application/json` (or none)",
  },
  BODY_TOO_LARGE: {
    status: 413,
    rpc: RPC_INVALID_REQUEST,
    meaning: "the body is larger than `--body-limit`",
  },
  NOT_FOUND: { status: 404, meaning: "a request other than `POST` to a path nothing serves" },
  UPGRADE_REQUIRED: { status: 426, meaning: "`GET /` without a WebSocket upgrade" },
  UNKNOWN_CHAIN: {
    status: 400,
    rpc: RPC_INVALID_REQUEST,
    meaning: "`chain_id` / `X-Chain-Id` names a chain that is not configured",
  },
  INTERNAL: {
    status: 500,
    rpc: RPC_INTERNAL_ERROR,
    meaning: "a bug: logged with the request id, never with a stack trace in the answer",
  },

  // Access: keys, browsers, policy, rates
  API_KEY_REQUIRED: { status: 401, meaning: "keys are configured and the request sent none" },
  API_KEY_INVALID: { status: 401, meaning: "the API key is unknown or revoked" },
  ADMIN_REQUIRED: { status: 403, rpc: RPC_ADMIN_REQUIRED, meaning: "the operation needs an admin API key" },
  HOST_NOT_ALLOWED: { status: 403, meaning: "keyless mode: `Host` is not loopback or listed in `--vhosts`" },
  ORIGIN_NOT_ALLOWED: {
    status: 403,
    meaning:
      "keyless mode: a web page's `Origin` that is not the gateway's own or listed in `--allowed-origins`",
  },
  METHOD_DENIED: {
    status: 403,
    rpc: RPC_METHOD_DENIED,
    meaning: "the method is off by `--allow-methods` / `--deny-methods`",
  },
  RATE_LIMITED: {
    status: 429,
    rpc: RPC_LIMIT_EXCEEDED,
    retry: true,
    meaning: "the key's rate for this group is spent; `Retry-After` says when to come back",
  },
  CONCURRENCY_LIMIT: {
    status: 429,
    retry: true,
    meaning: "the key has `--max-concurrent-per-key` requests in flight",
  },
  SOCKET_LIMIT: { status: 429, retry: true, meaning: "the key holds `--max-sockets-per-key` WebSockets" },
  KDF_BUSY: {
    status: 429,
    alsoStatus: 503,
    rpc: RPC_LIMIT_EXCEEDED,
    retry: true,
    meaning: "key derivations: 429 when this key has its share waiting, 503 when the whole queue is full",
  },
  UPSTREAM_BUSY: {
    status: 429,
    alsoStatus: 503,
    rpc: RPC_LIMIT_EXCEEDED,
    retry: true,
    meaning:
      "the node-call queue refused the call (429 this key's share, 503 the whole queue; turns are fair)",
  },

  // Limits on reads, filters and subscriptions (docs/security.md)
  LOG_RANGE_TOO_LARGE: { ...LIMIT, meaning: "a log query spans more blocks than `--max-logs-range`" },
  TOO_MANY_RESULTS: {
    ...LIMIT,
    meaning: "a log query matched more than `--max-logs-results` logs; narrow it",
  },
  FILTER_TOO_LARGE: { ...LIMIT, meaning: "a log filter lists more addresses or topics than allowed" },
  FILTER_LIMIT: { ...LIMIT, meaning: "the key has `--max-filters-per-key` filters installed" },
  SUBSCRIPTION_EXPIRED: {
    status: 410,
    rpc: RPC_INVALID_PARAMS,
    meaning:
      "a `resumeAfter` cursor that can no longer be resumed (older than 1,024 blocks, its stream unused for an hour, or another key's)",
  },
  SUBSCRIPTION_LIMIT: {
    ...LIMIT,
    meaning: "the key has `--max-subscriptions-per-key` subscriptions over all its sockets",
  },
  RESPONSE_TOO_LARGE: { ...LIMIT, meaning: "the node's answer is larger than `--max-response-mb`" },
  ANSWERS_IN_FLIGHT: {
    status: 429,
    rpc: RPC_LIMIT_EXCEEDED,
    retry: true,
    meaning:
      "the key's requests (or all requests) hold as many answer bytes not yet read as allowed (`--max-response-mb` per key, twice that per instance); retry once they are read",
  },
  FILTER_NOT_FOUND: {
    status: 404,
    rpc: RPC_SERVER_ERROR,
    meaning: "`filter not found`: unknown, uninstalled, expired, or another chain's or tenant's filter",
  },

  // Nodes and the store
  NODE_ERROR: {
    status: 502,
    rpc: RPC_SERVER_ERROR,
    meaning: "the node's own error, passed through with its JSON-RPC code and `data`",
  },
  UPSTREAM_UNAVAILABLE: {
    status: 503,
    rpc: RPC_INTERNAL_ERROR,
    retry: true,
    failover: true,
    meaning: "no upstream could answer (timeouts, connection errors, HTTP 5xx/429)",
  },
  NODE_UNAVAILABLE: {
    status: 503,
    rpc: RPC_UNAVAILABLE,
    retry: true,
    meaning:
      "a node call a signed operation needed failed; with `tx_hash` the transaction is signed, stored and sent by the tracker",
  },
  STORE_UNAVAILABLE: {
    status: 503,
    rpc: RPC_UNAVAILABLE,
    retry: true,
    meaning: "the database dropped the connection or is full; retry shortly",
  },
  CONTRACTS_UNAVAILABLE: {
    status: 503,
    rpc: RPC_UNAVAILABLE,
    meaning: "chaingate's system contracts are not deployed on that chain",
  },

  // Wallets and keys
  WALLET_NOT_FOUND: {
    status: 404,
    rpc: RPC_WALLET_NOT_FOUND,
    meaning: "no wallet with that id (or not this key's)",
  },
  ADDRESS_NOT_FOUND: {
    status: 404,
    rpc: RPC_WALLET_NOT_FOUND,
    meaning: "the wallet has no address at that index",
  },
  WRONG_PASSWORD: {
    status: 401,
    rpc: RPC_WRONG_PASSWORD,
    meaning: "the password does not open the wallet's keystore",
  },
  WALLET_LOCKED: {
    status: 429,
    rpc: RPC_LIMIT_EXCEEDED,
    retry: true,
    meaning: "too many wrong passwords for this wallet; `data.retry_after_seconds` says when",
  },
  PASSWORD_REQUIRED: {
    ...BAD,
    meaning: "a keystore wallet's password is missing or empty",
  },
  WALLET_ID_REQUIRED: { ...BAD, meaning: "`wallet_id` is missing" },
  INVALID_WALLET_TYPE: { ...BAD, meaning: "`type` is not `KEYSTORE_V3`" },
  INVALID_ADDRESS_QUANTITY: {
    ...BAD,
    meaning: "`address_quantity` is not from 1 to `--max-addresses` (1 for a keystore import)",
  },
  INVALID_IMPORT: { ...BAD, meaning: "both a mnemonic and a keystore were given" },
  INVALID_MNEMONIC: { ...BAD, meaning: "not a valid BIP-39 English phrase" },
  INVALID_KEYSTORE: { ...BAD, meaning: "not a keystore v3 chaingate can open (the message says which part)" },
  KEY_NOT_FOUND: {
    status: 404,
    at: "CLI",
    meaning: "`chaingate keys revoke` with an id that is not an active key",
  },

  // The custody signer (docs/signer.md)
  UNKNOWN_ACCOUNT: {
    status: 404,
    rpc: RPC_SERVER_ERROR,
    meaning: "`unknown account`: no custody address of this key has it",
  },
  ACCOUNT_LOCKED: {
    status: 403,
    rpc: RPC_SERVER_ERROR,
    meaning: "`authentication needed`: unlock the address first (`personal_unlockAccount`)",
  },
  UNATTENDED_UNAVAILABLE: {
    status: 409,
    rpc: RPC_SERVER_ERROR,
    meaning: "unattended signing needs `--seal-key` configured",
  },
  SEAL_KEY_MISMATCH: {
    status: 503,
    rpc: RPC_SERVER_ERROR,
    meaning: "the configured seal key does not open this wallet's sealed password",
  },

  // Transactions
  INVALID_TRANSACTION: {
    ...BAD,
    meaning: "a transaction without `to` and without `data` (a deployment needs its code)",
  },
  INVALID_ADDRESS: { ...BAD, meaning: "not a 20-byte 0x address" },
  INVALID_HEX: { ...BAD, meaning: "not 0x-prefixed hex bytes" },
  INVALID_VALUE: { ...BAD, meaning: "not a non-negative integer of wei below 2^256" },
  INVALID_AMOUNT: { ...BAD, meaning: "an amount is not a positive integer below 2^256" },
  INSUFFICIENT_FUNDS: { ...REJECTED, meaning: "the address cannot pay value plus fees" },
  EXECUTION_REVERTED: { ...REJECTED, meaning: "the call reverts; `revert_reason` / `revert_data` say why" },
  ESTIMATION_FAILED: { ...REJECTED, meaning: "the node could not estimate gas for another reason" },
  TRANSACTION_REJECTED: { ...REJECTED, meaning: "the node refused the signed transaction" },
  NONCE_TOO_LOW: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning: "a client's own nonce is below the ledger's next",
  },
  NONCE_TOO_HIGH: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning: "a client's own nonce is above the ledger's next (it would wait behind a gap)",
  },
  INVALID_IDEMPOTENCY_KEY: { ...BAD, meaning: "`Idempotency-Key` is not 1 to 200 visible ASCII characters" },
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    rpc: RPC_INVALID_PARAMS,
    meaning: "the `Idempotency-Key` was used with another body",
  },
  IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    rpc: RPC_INTERNAL_ERROR,
    retry: true,
    meaning: "a request with this `Idempotency-Key` is still running",
  },
  OPERATION_INTERRUPTED: {
    status: 409,
    rpc: RPC_UNAVAILABLE,
    meaning: "the request with this key was cut off after signing; `data.tx_hashes` are tracked",
  },
  NOT_MINED_YET: {
    status: 504,
    rpc: RPC_UNAVAILABLE,
    retry: true,
    meaning:
      "an operation waited for its own transaction and it was not mined in time; `data.tx_hash` is tracked",
  },

  NONCE_ALREADY_SIGNED: {
    status: 409,
    rpc: RPC_TX_REJECTED,
    meaning:
      "another payload was already signed at this nonce of the address (`data.nonce`, `data.tx_hash`); chaingate signs one per nonce",
  },
  UNSUPPORTED_CAPABILITY: {
    status: 400,
    rpc: RPC_UNSUPPORTED_CAPABILITY,
    meaning: "wallet_sendCalls asked for a capability chaingate lacks without marking it optional (EIP-5792)",
  },
  UNSUPPORTED_CHAIN_ID: {
    status: 400,
    rpc: RPC_UNSUPPORTED_CHAIN_ID,
    meaning: "wallet_sendCalls names a chain chaingate does not serve",
  },
  DUPLICATE_BUNDLE_ID: {
    status: 409,
    rpc: RPC_DUPLICATE_BUNDLE_ID,
    meaning: "a bundle with this id was already sent by this key",
  },
  UNKNOWN_BUNDLE_ID: {
    status: 404,
    rpc: RPC_UNKNOWN_BUNDLE_ID,
    meaning: "wallet_getCallsStatus: no bundle with this id for this key",
  },
  BUNDLE_TOO_LARGE: {
    status: 413,
    rpc: RPC_BUNDLE_TOO_LARGE,
    meaning: "wallet_sendCalls: more than 16 calls",
  },
  ATOMICITY_NOT_SUPPORTED: {
    status: 400,
    rpc: RPC_ATOMICITY_NOT_SUPPORTED,
    meaning:
      "wallet_sendCalls with atomicRequired: chaingate sends the calls one by one, under consecutive nonces",
  },
  RECEIPT_TIMEOUT: {
    status: 504,
    rpc: RPC_SYNC_TIMEOUT,
    retry: true,
    meaning:
      "a synchronous send (EIP-7966) was sent but not mined within its timeout; `data.tx_hash` is in the pool (and tracked, for custody sends)",
  },
  TRANSACTION_NOT_READY: {
    status: 422,
    rpc: RPC_SYNC_NOT_READY,
    meaning:
      "a synchronous send (EIP-7966) was taken by the node but cannot be mined yet: its nonce is past the account's next (`data.expected_nonce`)",
  },

  // Policies, audit and webhooks
  POLICY_DENIED: {
    status: 403,
    rpc: RPC_POLICY_DENIED,
    meaning:
      "a signing policy refused the request; `data.rule` and `data.policy_id` name the rule; nothing was signed",
  },
  POLICY_NOT_FOUND: { status: 404, meaning: "no policy with that id" },
  INVALID_POLICY: { ...BAD, meaning: "a policy binds nothing, or a rule's value is not what it must be" },
  WEBHOOK_NOT_FOUND: { status: 404, meaning: "no webhook (or delivery) with that id for this key" },
  WEBHOOK_URL_REFUSED: {
    ...BAD,
    meaning:
      "a webhook URL is not http(s), or names a private or loopback address the operator did not allow",
  },
  WEBHOOK_LIMIT: { ...LIMIT, meaning: "the key has `--max-webhooks-per-key` webhooks already" },

  // Members, tokens, contracts and transports (reverts of chaingate's contracts answer 422 / -32010)
  MEMBER_NAME_TAKEN: {
    status: 409,
    rpc: RPC_INVALID_PARAMS,
    meaning: "a member with that name is registered already",
  },
  DESTINATION_NOT_MEMBER: {
    status: 422,
    rpc: RPC_INVALID_PARAMS,
    meaning: "no ACTIVE member is registered on the destination chain",
  },
  SAME_CHAIN: { ...BAD, meaning: "a transport's destination is its source chain" },
  RECEIVER_NOT_CONTRACT: {
    status: 422,
    rpc: RPC_INVALID_PARAMS,
    meaning:
      "a transport with data or a message names a receiver with no code on the destination chain; `data.field` names it",
  },
  TOKEN_NOT_FOUND: { ...BAD, meaning: "no contract at the token address on that chain" },
  TOKEN_NOT_TRANSPORTABLE: { ...REJECTED, meaning: "the token was not created by chaingate's endpoint" },
  TOKEN_ID_NOT_FOUND: { ...REJECTED, meaning: "the ERC721 token id does not exist" },
  TOKEN_ID_TAKEN: { ...REJECTED, meaning: "an ERC721 token with that id exists already" },
  NOT_TOKEN_OWNER: { ...REJECTED, meaning: "the sender does not own (and is not approved for) the token id" },
  INSUFFICIENT_TOKEN_BALANCE: { ...REJECTED, meaning: "the amount is more than the sender's token balance" },
  INVALID_CONSTRUCTOR_ARGS: { ...BAD, meaning: "`constructor_args` do not fit the contract's constructor" },
  LANE_LIMIT_NOT_FOUND: { status: 404, meaning: "no limit is set on that lane (source, destination, token)" },
  INVALID_LANE_LIMIT: {
    ...BAD,
    meaning: "a lane limit joins a chain to itself, or names a chain not configured",
  },

  // Start-up and the CLI
  CHAIN_ID_MISMATCH: {
    ...START,
    meaning:
      "an upstream serves another chain than its chain's others (it is quarantined), or two chains are one",
  },
  INSECURE_LISTEN: { ...START, meaning: "a non-loopback `--host` with no API key and no `--insecure`" },
  MIGRATION_FAILED: {
    ...START,
    meaning: "the store could not be migrated (the message names the migration)",
  },
  DEPLOYMENT_FAILED: { ...START, meaning: "a system contract could not be deployed" },
  DEVNET_UNSUPPORTED: {
    ...START,
    meaning: "no anvil binary for this platform: configure `CHAINGATE_UPSTREAMS`",
  },
  DEVNET_START_FAILED: { ...START, meaning: "an embedded anvil did not start (the message says why)" },
  ABORTED: { ...START, meaning: "start-up was interrupted (SIGINT/SIGTERM while waiting for an upstream)" },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}
