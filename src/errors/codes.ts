/** The error catalogue: every stable code chaingate answers or stops with, its statuses and retry flags. */
import { SIGNING_CODES } from "./codes-signing.js";
import {
  BAD,
  type ErrorCodeEntry,
  LIMIT,
  RPC_ADMIN_REQUIRED,
  RPC_INTERNAL_ERROR,
  RPC_INVALID_PARAMS,
  RPC_INVALID_REQUEST,
  RPC_LIMIT_EXCEEDED,
  RPC_METHOD_DENIED,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  RPC_SERVER_ERROR,
  RPC_UNAVAILABLE,
  RPC_WALLET_NOT_FOUND,
  RPC_WRONG_PASSWORD,
} from "./rpc-codes.js";

export * from "./rpc-codes.js";

/** Grouped by where a reader meets them; docs/api.md's index is written from this table (`npm run docs:errors`). */
const ACCESS_CODES = {
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
      "a `resumeAfter` cursor that can no longer be resumed (older than 1,024 blocks, its stream unused for an hour, another key's, or ahead of its stream's record for 5 s)",
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
  STATE_UNAVAILABLE: {
    status: 410,
    rpc: RPC_SERVER_ERROR,
    meaning:
      "a read at an old block no upstream of the chain still holds the state of (each is pruned past it); the message names each upstream's oldest block; an archive upstream serves it",
  },
  INVALID_CONSENSUS: {
    ...BAD,
    meaning:
      "`consensus` / `Chaingate-Consensus` is not a whole number from 1 to 16, asks more upstreams than the chain has, or names a call that is not a plain node read",
  },
  UPSTREAMS_DISAGREE: {
    status: 503,
    rpc: RPC_UNAVAILABLE,
    retry: true,
    meaning:
      "upstreams asked to agree (`consensus`, or a custody signature's simulation or estimate) said different things; `data.upstreams` has each one's answer, and nothing was signed",
  },
  METHOD_NOT_SERVED: {
    status: 501,
    rpc: RPC_METHOD_NOT_FOUND,
    meaning:
      "the chain's node does not serve this method (whatever code the node gave); the message names the chain, `data` the node's own answer",
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
  UNLOCKED_ELSEWHERE: {
    status: 409,
    rpc: RPC_SERVER_ERROR,
    meaning:
      "unlocked on another instance that could not share the unlock (no server key there, or none here): send the password, or give every instance the same server key",
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
} as const satisfies Record<string, ErrorCodeEntry>;

/** Grouped by where a reader meets them; docs/api.md's index is written from this table (`npm run docs:errors`). */
export const ERROR_CODES = { ...ACCESS_CODES, ...SIGNING_CODES } as const satisfies Record<
  string,
  ErrorCodeEntry
>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}
