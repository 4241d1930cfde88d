/** The validated, frozen configuration every subsystem reads. */
import type { TracingSettings } from "./otel-env.js";

/** Method namespaces beyond eth_/net_/web3_ an operator marks an upstream as serving (off unless marked). */
export const EXTRA_NAMESPACES = ["debug", "trace", "txpool"] as const;
export type ExtraNamespace = (typeof EXTRA_NAMESPACES)[number];

export interface UpstreamConfig {
  readonly url: string;
  readonly ws?: string;
  /** debug_*, trace_*, txpool_* calls go only to upstreams that list the namespace. */
  readonly namespaces?: readonly ExtraNamespace[];
}

/** When a source chain's event is final: at this many confirmations, or at the chain's `finalized` block. */
export type Finality = number | "finalized";

export interface ChainConfig {
  /** Discovered from the nodes at start when not given. */
  readonly chainId?: number;
  readonly name?: string;
  readonly upstreams: readonly UpstreamConfig[];
  /** What the relayer waits for before it moves value out of this chain; a default per chain when absent. */
  readonly finality?: Finality;
  /** Upstreams that must confirm a source event; every usable one (at least 2 of 2+) when absent. */
  readonly quorum?: number;
  /**
   * Hedged reads (with 2 or more upstreams): a read not answered within `afterMs` (absent: the
   * upstream's observed p90) is also asked of the next upstream; `false` turns them off.
   */
  readonly hedge?: false | { readonly afterMs?: number };
  /**
   * Consensus reads without asking (decision 150): per method, how many upstreams must answer alike;
   * `onDisagreement` says what a disagreement answers (an error naming each answer by default).
   */
  readonly consensus?: {
    readonly methods: Readonly<Record<string, number>>;
    readonly onDisagreement: "error" | "majority" | "highest_block";
  };
}

export type RateLimits = Readonly<
  Record<"read" | "sign" | "wallet_create" | "trace", { readonly count: number; readonly perMs: number }>
>;

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** OpenTelemetry traces, from the standard OTEL_* variables; absent: off (otel-env.ts). */
  readonly tracing: TracingSettings | undefined;
  /** `undefined` means: run the embedded devnet. */
  readonly chains: readonly ChainConfig[] | undefined;
  /** Chain served by Native paths and `POST /` without a chain selector; first chain when absent. */
  readonly homeChainId: number | undefined;
  readonly logLevel: string;
  readonly bodyLimit: number;
  readonly batchLimit: number;
  /** A filter not polled for this long is removed (`--filter-idle-seconds`). */
  readonly filterIdleMs: number;
  readonly upstreamTimeoutMs: number;
  readonly devnet: {
    readonly chainIds: readonly number[];
    readonly blockTime: number;
    readonly fundWallets: boolean;
  };
  readonly kdf: "standard" | "light";
  readonly maxAddressesPerWallet: number;
  /** How long an opened signer is kept (`--unlock-cache-seconds`). */
  readonly unlockCacheMs: number;
  /** Signing for JSON-RPC clients (eth_sendTransaction and the rest) from custody wallets. */
  readonly custody: {
    /** personal_unlockAccount's default duration, and the longest it grants. */
    readonly unlockSeconds: number;
    readonly unlockMaxSeconds: number;
    /** 32-byte server key (hex) sealing unattended wallets; absent: no wallet can be unattended. */
    readonly sealKey: string | undefined;
    /** Devnet only: anvil's own dev accounts are listed and used too. */
    readonly nodeAccounts: boolean;
    /** The PKCS#11 token PKCS11 wallets keep their keys on; absent: such wallets are refused. */
    readonly pkcs11:
      | {
          readonly module: string;
          readonly token: string;
          readonly pinFile: string;
          readonly timeoutMs: number;
          readonly sessions: number;
        }
      | undefined;
  };
  readonly scryptConcurrency: number;
  readonly gasMarginPercent: number;
  readonly confirmations: number;
  readonly trackerIntervalMs: number;
  readonly resendAfterMs: number;
  readonly logRequests: boolean;
  readonly headPollMs: number;
  /** Synchronous sends (EIP-7966): the wait when none is asked, and the longest one allowed. */
  readonly syncSend: { readonly defaultMs: number; readonly maxMs: number };
  /** The answer cache's size (`--cache-mb`). */
  readonly cacheBytes: number;
  readonly replaceAfterMs: number;
  /** Fee-bump replacements never offer more per gas, in wei (`--max-fee-gwei`). */
  readonly maxFeePerGas: bigint;
  /** Signs registry writes and deliveries; the devnet's built-in key when unset on the devnet. */
  readonly operatorKey: `0x${string}` | undefined;
  /** The operator key on the PKCS#11 token (label or id) instead of `operatorKey`. */
  readonly operatorKeyPkcs11: string | undefined;
  readonly relayerIntervalMs: number;
  /** Listen beyond loopback without API keys. */
  readonly insecure: boolean;
  /** Per API key, when keys exist. */
  readonly rateLimits: RateLimits;
  /** Per client address when no key exists: only the limits an operator set explicitly. */
  readonly rateLimitsWithoutKeys: RateLimits;
  readonly denyMethods: readonly string[];
  /** Empty: every method in the table. */
  readonly allowMethods: readonly string[];
  readonly requestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  /** Without API keys: Host names accepted besides IP literals and localhost. */
  readonly vhosts: readonly string[];
  /** Without API keys: browser origins accepted besides chaingate's own. */
  readonly allowedOrigins: readonly string[];
  readonly limits: ResourceLimits;
  readonly webhooks: WebhookSettings;
}

export interface WebhookSettings {
  /** Endpoints one tenant may register. */
  readonly perKey: number;
  /** Loopback and private addresses allowed as receivers (tests, a receiver beside chaingate). */
  readonly allowPrivate: boolean;
  readonly intervalMs: number;
  readonly retryBaseMs: number;
  /** A delivery is retried this long after its event, then given up. */
  readonly retryForMs: number;
  readonly timeoutMs: number;
  /** How often wallets with a balance alert are read. */
  readonly balanceCheckMs: number;
}

/** What one tenant (API key, or client address without keys) or one request may hold or ask for. */
export interface ResourceLimits {
  readonly filtersPerKey: number;
  readonly subscriptionsPerKey: number;
  readonly socketsPerKey: number;
  readonly filterAddresses: number;
  readonly logsRange: number;
  readonly logsResults: number;
  /** Largest answer to one call or one batch, and largest node answer read. */
  readonly responseBytes: number;
  /** Large answers one tenant is given per second (0: no limit). */
  readonly answerBytesPerSecond: number;
  /** HTTP requests one API key may have in flight (0: no limit). */
  readonly concurrentPerKey: number;
}

export const DEVNET_HOME_CHAIN_ID = 1001;
export const DEVNET_PEER_CHAIN_ID = 1002;
