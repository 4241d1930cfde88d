/** The option table: every setting once, with its env name, flag, parser and help text. */

/** A rate option: `count` requests per `perMs` (also the burst). */
export interface RateOption {
  count: number;
  perMs: number;
}

export type OptionValue = string | number | boolean | string[] | RateOption;

/** One option's row; `K` ties its default to the type of its value. */
interface OptionRow<K extends keyof OptionValues> {
  key: K;
  /** The value when nothing sets it: the one place a default is written (`DEFAULTS` is read from these). */
  default: OptionValues[K];
  env: string;
  flag: string;
  help: string;
  /** How --help and the README show the default, where the value itself does not say it. */
  defaultText?: string;
  /** Parses the raw text; returns an error message for a bad value. */
  parse: (raw: string) => { value: OptionValue } | { error: string };
}

export type OptionSpec = { [K in keyof OptionValues]: OptionRow<K> }[keyof OptionValues];

/** The default as --help and the README show it; undefined where nothing is set by default. */
export function shownDefault(option: OptionSpec): string | undefined {
  if (option.defaultText !== undefined) return option.defaultText;
  const value: unknown = option.default;
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.join(",");
  return String(value);
}

export interface OptionValues {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  upstreams: string[];
  configFile: string | undefined;
  logLevel: string;
  bodyLimit: number;
  batchLimit: number;
  filterIdleSeconds: number;
  upstreamTimeoutMs: number;
  devnetBlockTime: number;
  devnetFundWallets: boolean;
  kdf: string;
  maxAddressesPerWallet: number;
  unlockCacheSeconds: number;
  unlockSeconds: number;
  unlockMaxSeconds: number;
  sealKey: string | undefined;
  sealKeyFile: string | undefined;
  pkcs11Module: string | undefined;
  pkcs11Token: string | undefined;
  pkcs11PinFile: string | undefined;
  pkcs11TimeoutMs: number;
  pkcs11Sessions: number;
  devnetNodeAccounts: boolean;
  scryptConcurrency: number;
  gasMarginPercent: number;
  confirmations: number;
  trackerIntervalMs: number;
  resendAfterSeconds: number;
  logRequests: boolean;
  headPollMs: number;
  syncSendTimeoutMs: number;
  syncSendMaxMs: number;
  cacheMb: number;
  replaceAfterSeconds: number;
  maxFeeGwei: number;
  operatorKey: string | undefined;
  operatorKeyPkcs11: string | undefined;
  relayerIntervalMs: number;
  insecure: boolean;
  rateRead: RateOption | undefined;
  rateSign: RateOption | undefined;
  rateWallets: RateOption | undefined;
  rateTrace: RateOption | undefined;
  denyMethods: string[];
  allowMethods: string[];
  requestTimeoutMs: number;
  shutdownTimeoutMs: number;
  vhosts: string[];
  allowedOrigins: string[];
  maxFiltersPerKey: number;
  maxSubscriptionsPerKey: number;
  maxSocketsPerKey: number;
  maxFilterAddresses: number;
  maxLogsRange: number;
  maxLogsResults: number;
  maxResponseMb: number;
  maxAnswerMbPerSecond: number;
  maxConcurrentPerKey: number;
  maxWebhooksPerKey: number;
  webhookAllowPrivate: boolean;
  webhookIntervalMs: number;
  webhookRetryBaseMs: number;
  webhookRetryHours: number;
  webhookTimeoutMs: number;
  balanceCheckMs: number;
}

function integer(min: number, max: number): OptionSpec["parse"] {
  return (raw) => {
    const trimmed = raw.trim();
    if (!/^-?\d+$/.test(trimmed)) return { error: `must be an integer from ${min} to ${max}, got "${raw}"` };
    const value = Number(trimmed);
    // "-0" reads as -0, which no comparison with 0 refuses: where nothing below 0 is allowed, a
    // minus sign is refused itself.
    if (value < min || value > max || (min >= 0 && trimmed.startsWith("-")))
      return { error: `must be an integer from ${min} to ${max}, got ${trimmed}` };
    return { value };
  };
}

const RATE_UNITS: Record<string, number> = { s: 1000, min: 60_000, h: 3_600_000 };

/** A count in the option's own unit (`50`), or with one of its own (`100/min`, `5/h`). */
function rate(defaultPerMs: number): OptionSpec["parse"] {
  return (raw) => {
    const match = /^(\d+)(?:\/(s|min|h))?$/.exec(raw.trim());
    const count = Number(match?.[1]);
    if (!match || count > 1_000_000) {
      return {
        error: `must be a count up to 1000000, optionally per s, min or h (e.g. 50 or 100/min), got "${raw}"`,
      };
    }
    return { value: { count, perMs: match[2] ? RATE_UNITS[match[2]]! : defaultPerMs } };
  };
}

function oneOf(values: readonly string[]): OptionSpec["parse"] {
  return (raw) =>
    values.includes(raw) ? { value: raw } : { error: `must be one of ${values.join(", ")}, got "${raw}"` };
}

function nonEmpty(raw: string): { value: string } | { error: string } {
  return raw.trim() === "" ? { error: "must not be empty" } : { value: raw.trim() };
}

function boolean(raw: string): { value: boolean } | { error: string } {
  const lower = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(lower)) return { value: true };
  if (["0", "false", "no", "off"].includes(lower)) return { value: false };
  return { error: `must be true or false, got "${raw}"` };
}

function methodList(raw: string): { value: string[] } | { error: string } {
  const names = raw
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const bad = names.find((name) => !/^[a-zA-Z][a-zA-Z0-9_]*\*?$/.test(name));
  return bad === undefined
    ? { value: names }
    : { error: `"${bad}" is not a method name (letters, digits, _; a trailing * matches a prefix)` };
}

function hostList(raw: string): { value: string[] } | { error: string } {
  const hosts = raw
    .split(",")
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== "");
  const bad = hosts.find((h) => h !== "*" && !/^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(h));
  return bad === undefined ? { value: hosts } : { error: `"${bad}" is not a host name (or *, or *.domain)` };
}

function originList(raw: string): { value: string[] } | { error: string } {
  const origins = raw
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  for (const origin of origins) {
    if (origin === "*") continue;
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return { error: `"${origin}" is not an origin (scheme://host[:port])` };
    }
    if (parsed.origin !== origin)
      return { error: `"${origin}" is not an origin; did you mean "${parsed.origin}"?` };
  }
  return { value: origins };
}

function httpUrlList(raw: string): { value: string[] } | { error: string } {
  const urls = raw
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  if (urls.length === 0) return { error: "must list at least one http(s) URL" };
  for (const url of urls) {
    const problem = checkUrl(url, ["http:", "https:"]);
    if (problem) return { error: problem };
  }
  return { value: urls };
}

export function checkUrl(url: string, protocols: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a valid URL`;
  }
  if (!protocols.includes(parsed.protocol)) {
    return `"${url}" must use ${protocols.map((p) => p.replace(":", "")).join(" or ")}`;
  }
  return undefined;
}

function postgresUrl(raw: string): { value: string } | { error: string } {
  const problem = checkUrl(raw.trim(), ["postgres:", "postgresql:"]);
  return problem ? { error: problem } : { value: raw.trim() };
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const OPTIONS: readonly OptionSpec[] = [
  {
    key: "port",
    default: 8545,
    env: "PORT",
    flag: "--port",
    help: "TCP port to listen on",
    parse: integer(0, 65535),
  },
  {
    key: "host",
    default: "127.0.0.1",
    env: "HOST",
    flag: "--host",
    help: "address to listen on",
    parse: nonEmpty,
  },
  {
    key: "dataDir",
    default: "./.chaingate",
    env: "CHAINGATE_DATA_DIR",
    flag: "--data-dir",
    help: "directory for the SQLite database and the embedded chains' state",
    parse: nonEmpty,
  },
  {
    key: "databaseUrl",
    defaultText: "(SQLite)",
    default: undefined,
    env: "DATABASE_URL",
    flag: "--database-url",
    help: "PostgreSQL URL (postgres://...); SQLite in the data dir when absent",
    parse: postgresUrl,
  },
  {
    key: "upstreams",
    defaultText: "(embedded)",
    default: [],
    env: "CHAINGATE_UPSTREAMS",
    flag: "--upstreams",
    help: "comma-separated HTTP URLs of the home chain's nodes; embedded chains when absent",
    parse: httpUrlList,
  },
  {
    key: "configFile",
    default: undefined,
    env: "CHAINGATE_CONFIG",
    flag: "--config",
    help: "JSON config file (chains with several upstreams, any option below by its key)",
    parse: nonEmpty,
  },
  {
    key: "logLevel",
    default: "info",
    env: "LOG_LEVEL",
    flag: "--log-level",
    help: LOG_LEVELS.join("|"),
    parse: oneOf(LOG_LEVELS),
  },
  {
    key: "bodyLimit",
    default: 1024 * 1024,
    env: "CHAINGATE_BODY_LIMIT",
    flag: "--body-limit",
    help: "largest request body in bytes",
    parse: integer(1024, 64 * 1024 * 1024),
  },
  {
    key: "batchLimit",
    default: 100,
    env: "CHAINGATE_BATCH_LIMIT",
    flag: "--batch-limit",
    help: "most calls in one JSON-RPC batch",
    parse: integer(1, 10_000),
  },
  {
    key: "filterIdleSeconds",
    default: 300,
    env: "CHAINGATE_FILTER_IDLE_SECONDS",
    flag: "--filter-idle-seconds",
    help: "a filter not polled for this long is removed",
    parse: integer(1, 86_400),
  },
  {
    key: "upstreamTimeoutMs",
    default: 10_000,
    env: "CHAINGATE_UPSTREAM_TIMEOUT_MS",
    flag: "--upstream-timeout-ms",
    help: "time allowed for one node request before it counts as a fault",
    parse: integer(100, 600_000),
  },
  {
    key: "devnetBlockTime",
    default: 0,
    env: "CHAINGATE_DEVNET_BLOCK_TIME",
    flag: "--devnet-block-time",
    help: "embedded chains: seconds between blocks (0 mines one block per transaction)",
    parse: integer(0, 3600),
  },
  {
    key: "devnetFundWallets",
    default: true,
    env: "CHAINGATE_DEVNET_FUND_WALLETS",
    flag: "--devnet-fund-wallets",
    help: "embedded chains: give each new wallet address 100 ETH on every embedded chain (anvil_setBalance: no transaction, no block)",
    parse: boolean,
  },
  {
    key: "kdf",
    default: "standard",
    env: "CHAINGATE_KDF",
    flag: "--kdf",
    help: "keystore scrypt cost: standard (N=2^18, geth default) or light (N=2^12, development only)",
    parse: oneOf(["standard", "light"]),
  },
  {
    key: "maxAddressesPerWallet",
    default: 100,
    env: "CHAINGATE_MAX_ADDRESSES",
    flag: "--max-addresses",
    help: "largest address_quantity accepted by POST /wallet",
    parse: integer(1, 10_000),
  },
  {
    key: "unlockCacheSeconds",
    default: 300,
    env: "CHAINGATE_UNLOCK_CACHE_SECONDS",
    flag: "--unlock-cache-seconds",
    help: "after a correct password, keep the derived key in memory this long (0 disables)",
    parse: integer(0, 86_400),
  },
  {
    key: "unlockSeconds",
    default: 300,
    env: "CHAINGATE_UNLOCK_SECONDS",
    flag: "--unlock-seconds",
    help: "personal_unlockAccount without a duration (or 0) unlocks for this long",
    parse: integer(1, 86_400),
  },
  {
    key: "unlockMaxSeconds",
    default: 3600,
    env: "CHAINGATE_UNLOCK_MAX_SECONDS",
    flag: "--unlock-max-seconds",
    help: "longest unlock granted; longer requests are shortened to this",
    parse: integer(1, 604_800),
  },
  {
    key: "sealKey",
    default: undefined,
    env: "CHAINGATE_SEAL_KEY",
    flag: "--seal-key",
    help: "server key (64 hex digits) that seals unattended wallets' keys; prefer --seal-key-file",
    parse: (raw) =>
      /^(0x)?[0-9a-fA-F]{64}$/.test(raw.trim())
        ? { value: raw.trim().replace(/^0x/, "").toLowerCase() }
        : { error: "must be 64 hex digits (the value is not shown)" },
  },
  {
    key: "sealKeyFile",
    default: undefined,
    env: "CHAINGATE_SEAL_KEY_FILE",
    flag: "--seal-key-file",
    help: "file holding the server key (64 hex digits); keep it outside the data directory",
    parse: (raw) => ({ value: raw.trim() }),
  },
  {
    key: "pkcs11Module",
    default: undefined,
    env: "CHAINGATE_PKCS11_MODULE",
    flag: "--pkcs11-module",
    help: "PKCS#11 module (the HSM vendor's library, or SoftHSM2's libsofthsm2.so) for PKCS11 wallets",
    parse: (raw) => ({ value: raw.trim() }),
  },
  {
    key: "pkcs11Token",
    default: undefined,
    env: "CHAINGATE_PKCS11_TOKEN",
    flag: "--pkcs11-token",
    help: "label of the PKCS#11 token that holds PKCS11 wallets' keys",
    parse: (raw) => ({ value: raw.trim() }),
  },
  {
    key: "pkcs11PinFile",
    default: undefined,
    env: "CHAINGATE_PKCS11_PIN_FILE",
    flag: "--pkcs11-pin-file",
    help: "file holding the token's user PIN (never given on the command line, never logged)",
    parse: (raw) => ({ value: raw.trim() }),
  },
  {
    key: "pkcs11TimeoutMs",
    default: 5_000,
    env: "CHAINGATE_PKCS11_TIMEOUT_MS",
    flag: "--pkcs11-timeout-ms",
    help: "longest a token call may take before the token counts as hung (retryable HSM_UNAVAILABLE)",
    parse: integer(100, 120_000),
  },
  {
    key: "pkcs11Sessions",
    default: 4,
    env: "CHAINGATE_PKCS11_SESSIONS",
    flag: "--pkcs11-sessions",
    help: "token sessions signing at once (what the token allows)",
    parse: integer(1, 64),
  },
  {
    key: "devnetNodeAccounts",
    default: false,
    env: "CHAINGATE_DEVNET_NODE_ACCOUNTS",
    flag: "--devnet-node-accounts",
    help: "embedded chains only: also list and sign with anvil's own dev accounts (development aid)",
    parse: boolean,
  },
  {
    key: "scryptConcurrency",
    default: 2,
    env: "CHAINGATE_SCRYPT_CONCURRENCY",
    flag: "--scrypt-concurrency",
    help: "most key derivations at once (each takes 256 MiB at the standard setting); the rest wait",
    parse: integer(1, 16),
  },
  {
    key: "gasMarginPercent",
    default: 20,
    env: "CHAINGATE_GAS_MARGIN_PERCENT",
    flag: "--gas-margin-percent",
    help: "gas limit = estimate plus this percentage",
    parse: integer(0, 500),
  },
  {
    key: "confirmations",
    default: 1,
    env: "CHAINGATE_CONFIRMATIONS",
    flag: "--confirmations",
    help: "blocks (the transaction's own included) before a mined transaction is confirmed",
    parse: integer(1, 1000),
  },
  {
    key: "trackerIntervalMs",
    default: 1000,
    env: "CHAINGATE_TRACKER_INTERVAL_MS",
    flag: "--tracker-interval-ms",
    help: "how often the transaction tracker looks at receipts and resends",
    parse: integer(50, 600_000),
  },
  {
    key: "resendAfterSeconds",
    default: 30,
    env: "CHAINGATE_RESEND_AFTER_SECONDS",
    flag: "--resend-after-seconds",
    help: "a sent transaction the node no longer knows is resent after this long",
    parse: integer(1, 86_400),
  },
  {
    key: "logRequests",
    default: true,
    env: "CHAINGATE_LOG_REQUESTS",
    flag: "--log-requests",
    help: "one access-log line per request at info, written in batches (false: none)",
    parse: boolean,
  },
  {
    key: "headPollMs",
    default: 250,
    env: "CHAINGATE_HEAD_POLL_MS",
    flag: "--head-poll-ms",
    help: "how often each chain's head is read; bounds how long a cached 'latest' answer can lag a new block",
    parse: integer(20, 60_000),
  },
  {
    key: "syncSendTimeoutMs",
    default: 2000,
    env: "CHAINGATE_SYNC_SEND_TIMEOUT_MS",
    flag: "--sync-send-timeout-ms",
    help: "how long a synchronous send (eth_sendRawTransactionSync, eth_sendTransactionSync, POST /transaction's wait) waits for its receipt when the caller names no timeout",
    parse: integer(1, 600_000),
  },
  {
    key: "syncSendMaxMs",
    default: 60_000,
    env: "CHAINGATE_SYNC_SEND_MAX_MS",
    flag: "--sync-send-max-ms",
    help: "the longest wait a caller may ask of a synchronous send; a longer one waits this long",
    parse: integer(1, 600_000),
  },
  {
    key: "cacheMb",
    default: 32,
    env: "CHAINGATE_CACHE_MB",
    flag: "--cache-mb",
    help: "memory for cached node answers (0 disables caching; identical calls in flight are still joined)",
    parse: integer(0, 4096),
  },
  {
    key: "replaceAfterSeconds",
    default: 60,
    env: "CHAINGATE_REPLACE_AFTER_SECONDS",
    flag: "--replace-after-seconds",
    help: "a transaction pending this long is replaced with fees raised 12.5%",
    parse: integer(1, 86_400),
  },
  {
    key: "maxFeeGwei",
    default: 1000,
    env: "CHAINGATE_MAX_FEE_GWEI",
    flag: "--max-fee-gwei",
    help: "replacements never offer more than this per gas",
    parse: integer(1, 1_000_000),
  },
  {
    key: "operatorKey",
    default: undefined,
    env: "CHAINGATE_OPERATOR_KEY",
    flag: "--operator-key",
    help: "private key (0x + 64 hex) that writes the member registry and relays transports; on the devnet a built-in key is used when unset",
    parse: (raw) =>
      /^0x[0-9a-fA-F]{64}$/.test(raw.trim())
        ? { value: raw.trim().toLowerCase() }
        : { error: "must be 0x followed by 64 hex digits (the value is not shown)" },
  },
  {
    key: "operatorKeyPkcs11",
    default: undefined,
    env: "CHAINGATE_OPERATOR_KEY_PKCS11",
    flag: "--operator-key-pkcs11",
    help: "the operator key on the PKCS#11 token instead (its label, or its id in hex): the operator signs there",
    parse: (raw) => ({ value: raw.trim() }),
  },
  {
    key: "relayerIntervalMs",
    default: 500,
    env: "CHAINGATE_RELAYER_INTERVAL_MS",
    flag: "--relayer-interval-ms",
    help: "how often the relayer looks for transports to deliver",
    parse: integer(50, 600_000),
  },
  {
    key: "insecure",
    default: false,
    env: "CHAINGATE_INSECURE",
    flag: "--insecure",
    help: "allow listening on a non-loopback address with no API keys (anyone who can reach it can use every wallet)",
    parse: boolean,
  },
  {
    key: "rateRead",
    default: undefined,
    env: "CHAINGATE_RATE_READ",
    flag: "--rate-read",
    help: "node reads and listings allowed per second per API key (or per client address without keys), or N/min, N/h; 0: no limit",
    defaultText: "0",
    parse: rate(1000),
  },
  {
    key: "rateTrace",
    default: undefined,
    env: "CHAINGATE_RATE_TRACE",
    flag: "--rate-trace",
    help: "debug_*, trace_* and txpool_* calls per second per key (served only by upstreams marked for them), or N/min, N/h; 0: no limit",
    defaultText: "5 with API keys, off without",
    parse: rate(1000),
  },
  {
    key: "rateSign",
    default: undefined,
    env: "CHAINGATE_RATE_SIGN",
    flag: "--rate-sign",
    help: "signed operations (transactions, tokens, transports, members) per second per key, or N/min, N/h; 0: no limit",
    defaultText: "50 with API keys, off without",
    parse: rate(1000),
  },
  {
    key: "rateWallets",
    default: undefined,
    env: "CHAINGATE_RATE_WALLETS",
    flag: "--rate-wallets",
    help: "wallet creations per minute per key, or N/s, N/h; 0: no limit",
    defaultText: "30 with API keys, off without",
    parse: rate(60_000),
  },
  {
    key: "denyMethods",
    default: [],
    env: "CHAINGATE_DENY_METHODS",
    flag: "--deny-methods",
    help: "node methods refused (comma-separated; `eth_sign*` matches a prefix), e.g. eth_sendTransaction,eth_sign",
    parse: methodList,
  },
  {
    key: "allowMethods",
    default: [],
    env: "CHAINGATE_ALLOW_METHODS",
    flag: "--allow-methods",
    help: "when set, only these node methods are served (comma-separated, prefixes with *)",
    parse: methodList,
  },
  {
    key: "vhosts",
    default: ["localhost"],
    env: "CHAINGATE_VHOSTS",
    flag: "--vhosts",
    help: "without API keys: host names accepted in the Host header besides IP addresses and localhost (DNS-rebinding guard, as geth's --http.vhosts); * for any",
    parse: hostList,
  },
  {
    key: "allowedOrigins",
    default: [],
    env: "CHAINGATE_ALLOWED_ORIGINS",
    flag: "--allowed-origins",
    help: "without API keys: browser origins allowed besides chaingate's own (HTTP and WebSocket); * for any",
    defaultText: "none",
    parse: originList,
  },
  {
    key: "maxFiltersPerKey",
    default: 1000,
    env: "CHAINGATE_MAX_FILTERS_PER_KEY",
    flag: "--max-filters-per-key",
    help: "installed filters one API key (or, without keys, one client address) may hold",
    parse: integer(1, 1_000_000),
  },
  {
    key: "maxSubscriptionsPerKey",
    default: 1000,
    env: "CHAINGATE_MAX_SUBSCRIPTIONS_PER_KEY",
    flag: "--max-subscriptions-per-key",
    help: "eth_subscribe subscriptions one API key (or client address) may hold over all its sockets",
    parse: integer(1, 1_000_000),
  },
  {
    key: "maxSocketsPerKey",
    default: 100,
    env: "CHAINGATE_MAX_SOCKETS_PER_KEY",
    flag: "--max-sockets-per-key",
    help: "open WebSockets per API key (or client address)",
    parse: integer(1, 100_000),
  },
  {
    key: "maxFilterAddresses",
    default: 1000,
    env: "CHAINGATE_MAX_FILTER_ADDRESSES",
    flag: "--max-filter-addresses",
    help: "addresses (and topics per position) in one log filter, subscription or eth_getLogs",
    parse: integer(1, 100_000),
  },
  {
    key: "maxLogsRange",
    default: 10_000,
    env: "CHAINGATE_MAX_LOGS_RANGE",
    flag: "--max-logs-range",
    help: "blocks one eth_getLogs (or eth_getFilterLogs) may span",
    parse: integer(1, 100_000_000),
  },
  {
    key: "maxLogsResults",
    default: 10_000,
    env: "CHAINGATE_MAX_LOGS_RESULTS",
    flag: "--max-logs-results",
    help: "logs one eth_getLogs, eth_getFilterLogs or eth_getFilterChanges may answer",
    parse: integer(1, 10_000_000),
  },
  {
    key: "maxConcurrentPerKey",
    default: 512,
    env: "CHAINGATE_MAX_CONCURRENT_PER_KEY",
    flag: "--max-concurrent-per-key",
    help: "HTTP requests one API key may have in flight (0: no limit; none without keys)",
    parse: integer(0, 1_000_000),
  },
  {
    key: "maxResponseMb",
    default: 64,
    env: "CHAINGATE_MAX_RESPONSE_MB",
    flag: "--max-response-mb",
    help: "largest answer chaingate sends for one call or one whole batch, and reads from a node, in MiB",
    parse: integer(1, 4096),
  },
  {
    key: "maxAnswerMbPerSecond",
    default: 16,
    env: "CHAINGATE_MAX_ANSWER_MB_PER_SECOND",
    flag: "--max-answer-mb-per-second",
    help: "large answers (over 16 KiB each, such as log queries) one key is given per second, in MiB; one answer may be larger, and the key's next large reads then wait until it is paid for (0: no limit)",
    parse: integer(0, 65536),
  },
  {
    key: "requestTimeoutMs",
    default: 30_000,
    env: "CHAINGATE_REQUEST_TIMEOUT_MS",
    flag: "--request-timeout-ms",
    help: "a request (body included) must arrive within this time (slow clients are cut off)",
    parse: integer(100, 600_000),
  },
  {
    key: "shutdownTimeoutMs",
    default: 10_000,
    env: "CHAINGATE_SHUTDOWN_TIMEOUT_MS",
    flag: "--shutdown-timeout-ms",
    help: "on SIGTERM, in-flight requests get this long to finish before chaingate exits anyway",
    parse: integer(0, 600_000),
  },
  {
    key: "maxWebhooksPerKey",
    default: 20,
    env: "CHAINGATE_MAX_WEBHOOKS_PER_KEY",
    flag: "--max-webhooks-per-key",
    help: "webhook endpoints one API key (or, without keys, the one local user) may register",
    parse: integer(1, 10_000),
  },
  {
    key: "webhookAllowPrivate",
    default: false,
    env: "CHAINGATE_WEBHOOK_ALLOW_PRIVATE",
    flag: "--webhook-allow-private",
    help: "let webhook URLs reach loopback and private addresses (refused by default: a tenant must not make chaingate call into its own network)",
    parse: boolean,
  },
  {
    key: "webhookIntervalMs",
    default: 500,
    env: "CHAINGATE_WEBHOOK_INTERVAL_MS",
    flag: "--webhook-interval-ms",
    help: "how often the webhook sender looks for due deliveries",
    parse: integer(10, 60_000),
  },
  {
    key: "webhookRetryBaseMs",
    default: 5000,
    env: "CHAINGATE_WEBHOOK_RETRY_BASE_MS",
    flag: "--webhook-retry-base-ms",
    help: "first retry delay of a failed webhook delivery; each next one doubles (with jitter) up to one hour",
    parse: integer(10, 3_600_000),
  },
  {
    key: "webhookRetryHours",
    default: 72,
    env: "CHAINGATE_WEBHOOK_RETRY_HOURS",
    flag: "--webhook-retry-hours",
    help: "a webhook delivery is retried for this long after its event before it is given up (it can still be redelivered by hand)",
    parse: integer(24, 24 * 30),
  },
  {
    key: "webhookTimeoutMs",
    default: 10_000,
    env: "CHAINGATE_WEBHOOK_TIMEOUT_MS",
    flag: "--webhook-timeout-ms",
    help: "a webhook receiver must answer within this time, or the attempt counts as failed",
    parse: integer(100, 120_000),
  },
  {
    key: "balanceCheckMs",
    default: 15_000,
    env: "CHAINGATE_BALANCE_CHECK_MS",
    flag: "--balance-check-ms",
    help: "how often addresses of wallets with a balance alert are read (wallet.balance_low webhooks)",
    parse: integer(50, 3_600_000),
  },
];
