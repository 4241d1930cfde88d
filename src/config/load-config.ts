/** Builds the Config from defaults, a JSON file, the environment and flags; reports every bad field at once. */
import { existsSync, readFileSync } from "node:fs";
import { resolve, sep } from "node:path";
import {
  type ChainConfig,
  type Config,
  DEVNET_HOME_CHAIN_ID,
  DEVNET_PEER_CHAIN_ID,
  EXTRA_NAMESPACES,
  type ExtraNamespace,
  type UpstreamConfig,
} from "./config.js";
import {
  checkUrl,
  OPTIONS,
  type OptionSpec,
  type OptionValue,
  type OptionValues,
  shownDefault,
} from "./options.js";
import { readTracing } from "./otel-env.js";

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface ConfigSources {
  env?: Record<string, string | undefined>;
  argv?: readonly string[];
}

/** The units options are written in, converted here once: the rest of chaingate reads ms, bytes and wei. */
const SECOND = 1000;
const MIB = 1024 * 1024;
const GWEI = 1_000_000_000n;

/** Each option's default, from its row in the option table. */
const DEFAULTS = Object.fromEntries(OPTIONS.map((o) => [o.key, o.default])) as unknown as OptionValues;

/** Splits argv into `--flag value` / `--flag=value` pairs; unknown flags are problems, not ignored. */
function readFlags(argv: readonly string[], problems: string[]): Map<OptionSpec, string> {
  const byFlag = new Map(OPTIONS.map((o) => [o.flag, o]));
  const found = new Map<OptionSpec, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const spec = byFlag.get(name);
    if (!spec) {
      problems.push(`unknown argument "${arg}" (see --help)`);
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) {
      problems.push(`${spec.flag} needs a value`);
      continue;
    }
    found.set(spec, value);
  }
  return found;
}

function readFile(path: string, problems: string[]): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    problems.push(`config file "${path}" cannot be read: ${(error as Error).message}`);
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      problems.push(`config file "${path}" must hold a JSON object`);
      return undefined;
    }
    return parsed as Record<string, unknown>;
  } catch (error) {
    problems.push(`config file "${path}" is not valid JSON: ${(error as Error).message}`);
    return undefined;
  }
}

const CHAIN_KEYS = ["chainId", "name", "upstreams", "finality", "quorum", "hedge", "consensus"];
const DISAGREEMENT_POLICIES = ["error", "majority", "highest_block"] as const;

/** A chain's `consensus` entry, checked: every problem is pushed, a usable value answered. */
function readConsensus(
  raw: unknown,
  where: string,
  upstreamCount: number,
  problems: string[],
): ChainConfig["consensus"] {
  if (raw === undefined) return undefined;
  const shape = `${where}.consensus must be {"methods": {"<method>": <upstreams>, ...}, "onDisagreement"?: ${DISAGREEMENT_POLICIES.map((p) => `"${p}"`).join(" | ")}}`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    problems.push(shape);
    return undefined;
  }
  const { methods, onDisagreement, ...rest } = raw as Record<string, unknown>;
  for (const key of Object.keys(rest)) problems.push(`${shape}; unknown key "${key}"`);
  if (onDisagreement !== undefined && !(DISAGREEMENT_POLICIES as readonly unknown[]).includes(onDisagreement))
    problems.push(`${shape}; got onDisagreement ${JSON.stringify(onDisagreement)}`);
  if (typeof methods !== "object" || methods === null || Array.isArray(methods)) {
    problems.push(shape);
    return undefined;
  }
  const checked: Record<string, number> = {};
  for (const [method, n] of Object.entries(methods)) {
    if (!/^[a-z]+_[A-Za-z0-9]+$/.test(method))
      problems.push(`${where}.consensus.methods: "${method}" is not a method name`);
    else if (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > upstreamCount)
      problems.push(
        `${where}.consensus.methods.${method} must be a whole number from 1 to the chain's ${upstreamCount} upstream(s); got ${JSON.stringify(n)}`,
      );
    else checked[method] = n as number;
  }
  return {
    methods: checked,
    onDisagreement: (onDisagreement as (typeof DISAGREEMENT_POLICIES)[number] | undefined) ?? "error",
  };
}

function readChains(raw: unknown, problems: string[]): ChainConfig[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push("config file: chains must be a non-empty array");
    return undefined;
  }
  const chains = raw.flatMap((entry: unknown, i) => {
    const chain = readChain(entry, `config file: chains[${i}]`, problems);
    return chain === undefined ? [] : [chain];
  });
  const ids = chains.flatMap((c) => (c.chainId === undefined ? [] : [c.chainId]));
  if (new Set(ids).size !== ids.length) problems.push("config file: two chains have the same chainId");
  return chains;
}

/** One entry of `chains`: every problem pushed, the entry answered when it can be used. */
function readChain(entry: unknown, where: string, problems: string[]): ChainConfig | undefined {
  if (typeof entry !== "object" || entry === null) {
    problems.push(`${where} must be an object`);
    return undefined;
  }
  const { chainId, name, upstreams, finality, quorum, hedge, consensus } = entry as Record<string, unknown>;
  for (const key of Object.keys(entry))
    if (!CHAIN_KEYS.includes(key))
      problems.push(`${where}: unknown key "${key}" (known: ${CHAIN_KEYS.join(", ")})`);
  if (
    finality !== undefined &&
    finality !== "finalized" &&
    (!Number.isSafeInteger(finality) || (finality as number) < 1 || (finality as number) > 100_000)
  )
    problems.push(
      `${where}.finality must be "finalized" or a number of confirmations from 1 to 100000; got ${JSON.stringify(finality)}`,
    );
  const upstreamCount = Array.isArray(upstreams) ? upstreams.length : 0;
  if (
    quorum !== undefined &&
    (!Number.isSafeInteger(quorum) || (quorum as number) < 1 || (quorum as number) > upstreamCount)
  )
    problems.push(
      `${where}.quorum must be a whole number from 1 to the chain's ${upstreamCount} upstream(s); got ${JSON.stringify(quorum)}`,
    );
  const hedgeAfter = checkHedge(hedge, where, problems);
  const consensusDefaults = readConsensus(consensus, where, upstreamCount, problems);
  if (chainId !== undefined && (!Number.isSafeInteger(chainId) || (chainId as number) <= 0)) {
    problems.push(`${where}.chainId must be a positive integer`);
  }
  if (name !== undefined && typeof name !== "string") problems.push(`${where}.name must be a string`);
  if (!Array.isArray(upstreams) || upstreams.length === 0) {
    problems.push(`${where}.upstreams must be a non-empty array of {url, ws?, namespaces?}`);
    return undefined;
  }
  const list = readUpstreams(upstreams, where, problems);
  return {
    ...(typeof chainId === "number" ? { chainId } : {}),
    ...(typeof name === "string" ? { name } : {}),
    upstreams: list,
    ...(finality === "finalized" || typeof finality === "number" ? { finality } : {}),
    ...(typeof quorum === "number" ? { quorum } : {}),
    ...(hedge === false
      ? { hedge: false as const }
      : typeof hedge === "object" && hedge !== null
        ? { hedge: typeof hedgeAfter === "number" ? { afterMs: hedgeAfter } : {} }
        : {}),
    ...(consensusDefaults === undefined ? {} : { consensus: consensusDefaults }),
  };
}

/** `hedge`: false, {}, or {"afterMs": N}; answers afterMs when given. */
function checkHedge(hedge: unknown, where: string, problems: string[]): unknown {
  const hedgeAfter =
    typeof hedge === "object" && hedge !== null ? (hedge as { afterMs?: unknown }).afterMs : undefined;
  if (
    hedge !== undefined &&
    hedge !== false &&
    (typeof hedge !== "object" ||
      hedge === null ||
      Object.keys(hedge).some((k) => k !== "afterMs") ||
      (hedgeAfter !== undefined &&
        (!Number.isSafeInteger(hedgeAfter) || (hedgeAfter as number) < 1 || (hedgeAfter as number) > 60_000)))
  )
    problems.push(
      `${where}.hedge must be false or {"afterMs": 1 to 60000} ({} for the upstream's observed p90); got ${JSON.stringify(hedge)}`,
    );
  return hedgeAfter;
}

/** `upstreams`: URLs or {url, ws?, namespaces?}. */
function readUpstreams(upstreams: unknown[], where: string, problems: string[]): UpstreamConfig[] {
  return upstreams.flatMap((u: unknown, j) => {
    const url = typeof u === "string" ? u : (u as { url?: unknown } | null)?.url;
    const ws = typeof u === "object" && u !== null ? (u as { ws?: unknown }).ws : undefined;
    const urlProblem = typeof url === "string" ? checkUrl(url, ["http:", "https:"]) : "url is required";
    if (urlProblem) problems.push(`${where}.upstreams[${j}]: ${urlProblem}`);
    if (ws !== undefined) {
      const wsProblem = typeof ws === "string" ? checkUrl(ws, ["ws:", "wss:"]) : "ws must be a string";
      if (wsProblem) problems.push(`${where}.upstreams[${j}]: ${wsProblem}`);
    }
    const namespaces =
      typeof u === "object" && u !== null ? (u as { namespaces?: unknown }).namespaces : undefined;
    if (
      namespaces !== undefined &&
      (!Array.isArray(namespaces) ||
        namespaces.some((n) => !(EXTRA_NAMESPACES as readonly unknown[]).includes(n)))
    )
      problems.push(
        `${where}.upstreams[${j}].namespaces must be a list of ${EXTRA_NAMESPACES.map((n) => `"${n}"`).join(", ")}; got ${JSON.stringify(namespaces)}`,
      );
    if (typeof url !== "string") return [];
    return [
      {
        url,
        ...(ws === undefined ? {} : { ws: String(ws) }),
        ...(Array.isArray(namespaces) ? { namespaces: namespaces as ExtraNamespace[] } : {}),
      },
    ];
  });
}

export function loadConfig(sources: ConfigSources = {}): Config {
  const problems: string[] = [];
  const read = readSources(sources, problems);
  const checked = checkTogether(read, problems);
  const tracing = readTracing(sources.env ?? process.env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze({ ...configFrom(read.v, checked), tracing });
}

interface ReadSources {
  v: OptionValues;
  chains: ChainConfig[] | undefined;
  homeChainId: number | undefined;
}

/** Every option from its sources, in precedence order: flag > environment > config file > default. */
function readSources(sources: ConfigSources, problems: string[]): ReadSources {
  const env = sources.env ?? process.env;
  const values: Record<string, OptionValue | undefined> = { ...DEFAULTS };
  const flags = readFlags(sources.argv ?? [], problems);

  const apply = (spec: OptionSpec, raw: string, origin: string): void => {
    const parsed = spec.parse(raw);
    if ("error" in parsed) problems.push(`${origin}: ${parsed.error}`);
    else values[spec.key] = parsed.value;
  };

  // The file is located first (flag > env) because the other sources override what it says.
  const fileSpec = OPTIONS.find((o) => o.key === "configFile");
  const filePath = (fileSpec && flags.get(fileSpec)) ?? env.CHAINGATE_CONFIG;
  const file = filePath ? readFile(filePath, problems) : undefined;
  let chains: ChainConfig[] | undefined;
  let homeChainId: number | undefined;
  if (file) {
    const known = new Set<string>([...OPTIONS.map((o) => o.key), "chains", "homeChainId"]);
    for (const key of Object.keys(file)) {
      if (!known.has(key)) problems.push(`config file: unknown key "${key}"`);
    }
    for (const spec of OPTIONS) {
      const raw = file[spec.key];
      if (raw === undefined || spec.key === "configFile") continue;
      apply(spec, Array.isArray(raw) ? raw.join(",") : String(raw), `config file: ${spec.key}`);
    }
    chains = readChains(file.chains, problems);
    if (file.homeChainId !== undefined) {
      if (!Number.isSafeInteger(file.homeChainId) || (file.homeChainId as number) <= 0) {
        problems.push("config file: homeChainId must be a positive integer");
      } else homeChainId = file.homeChainId as number;
    }
  }
  for (const spec of OPTIONS) {
    const raw = env[spec.env];
    if (raw !== undefined && raw !== "") apply(spec, raw, `${spec.env}`);
  }
  for (const [spec, raw] of flags) apply(spec, raw, spec.flag);

  return { v: values as unknown as OptionValues, chains, homeChainId };
}

interface Checked {
  chains: ChainConfig[] | undefined;
  homeChainId: number | undefined;
  sealKey: Config["custody"]["sealKey"];
  pkcs11: Config["custody"]["pkcs11"];
}

/** What no single option can say alone: sources that exclude each other, and values that must agree. */
function checkTogether(read: ReadSources, problems: string[]): Checked {
  const { v, homeChainId } = read;
  let chains = read.chains;
  if (v.upstreams.length > 0) {
    if (chains) problems.push("CHAINGATE_UPSTREAMS and a config file with chains cannot be used together");
    else chains = [{ upstreams: v.upstreams.map((url) => ({ url })) }];
  }
  if (homeChainId !== undefined && chains && !chains.some((c) => c.chainId === homeChainId)) {
    problems.push(`config file: homeChainId ${homeChainId} is not one of the configured chains`);
  }
  const sealKey = readSealKey(v, problems);
  const pkcs11 = readPkcs11(v, problems);
  if (v.operatorKeyPkcs11 !== undefined && v.operatorKey !== undefined)
    problems.push("CHAINGATE_OPERATOR_KEY and CHAINGATE_OPERATOR_KEY_PKCS11 cannot be used together");
  if (v.operatorKeyPkcs11 !== undefined && pkcs11 === undefined)
    problems.push(
      "CHAINGATE_OPERATOR_KEY_PKCS11 needs the token: CHAINGATE_PKCS11_MODULE, CHAINGATE_PKCS11_TOKEN and CHAINGATE_PKCS11_PIN_FILE",
    );
  if (v.unlockSeconds > v.unlockMaxSeconds)
    problems.push(
      `--unlock-seconds (${v.unlockSeconds}) must not exceed --unlock-max-seconds (${v.unlockMaxSeconds})`,
    );
  if (v.devnetNodeAccounts && chains)
    problems.push(
      "--devnet-node-accounts applies to the embedded chains only; remove it when upstreams are configured",
    );
  return { chains, homeChainId, sealKey, pkcs11 };
}

function configFrom(v: OptionValues, checked: Checked): Omit<Config, "tracing"> {
  const { chains, homeChainId, sealKey, pkcs11 } = checked;
  return {
    port: v.port,
    host: v.host,
    dataDir: v.dataDir,
    databaseUrl: v.databaseUrl,
    chains,
    homeChainId: chains ? (homeChainId ?? chains[0]?.chainId) : DEVNET_HOME_CHAIN_ID,
    logLevel: v.logLevel,
    bodyLimit: v.bodyLimit,
    batchLimit: v.batchLimit,
    filterIdleMs: v.filterIdleSeconds * SECOND,
    upstreamTimeoutMs: v.upstreamTimeoutMs,
    devnet: {
      chainIds: [DEVNET_HOME_CHAIN_ID, DEVNET_PEER_CHAIN_ID],
      blockTime: v.devnetBlockTime,
      fundWallets: v.devnetFundWallets,
    },
    kdf: v.kdf as Config["kdf"],
    maxAddressesPerWallet: v.maxAddressesPerWallet,
    unlockCacheMs: v.unlockCacheSeconds * SECOND,
    custody: {
      unlockSeconds: v.unlockSeconds,
      unlockMaxSeconds: v.unlockMaxSeconds,
      sealKey,
      nodeAccounts: v.devnetNodeAccounts,
      pkcs11,
    },
    scryptConcurrency: v.scryptConcurrency,
    gasMarginPercent: v.gasMarginPercent,
    confirmations: v.confirmations,
    trackerIntervalMs: v.trackerIntervalMs,
    resendAfterMs: v.resendAfterSeconds * SECOND,
    logRequests: v.logRequests,
    headPollMs: v.headPollMs,
    syncSend: { defaultMs: Math.min(v.syncSendTimeoutMs, v.syncSendMaxMs), maxMs: v.syncSendMaxMs },
    cacheBytes: v.cacheMb * MIB,
    replaceAfterMs: v.replaceAfterSeconds * SECOND,
    maxFeePerGas: BigInt(v.maxFeeGwei) * GWEI,
    operatorKey: v.operatorKey as `0x${string}` | undefined,
    operatorKeyPkcs11: v.operatorKeyPkcs11,
    relayerIntervalMs: v.relayerIntervalMs,
    insecure: v.insecure,
    ...rateLimitsOf(v),
    denyMethods: v.denyMethods,
    allowMethods: v.allowMethods,
    requestTimeoutMs: v.requestTimeoutMs,
    shutdownTimeoutMs: v.shutdownTimeoutMs,
    vhosts: v.vhosts,
    allowedOrigins: v.allowedOrigins,
    limits: limitsOf(v),
    webhooks: webhooksOf(v),
  };
}

/** With API keys the documented defaults apply; with none (one local user) only limits set on purpose. */
function rateLimitsOf(v: OptionValues): Pick<Config, "rateLimits" | "rateLimitsWithoutKeys"> {
  return {
    rateLimits: {
      read: v.rateRead ?? { count: 0, perMs: 1000 },
      sign: v.rateSign ?? { count: 50, perMs: 1000 },
      wallet_create: v.rateWallets ?? { count: 30, perMs: 60_000 },
      trace: v.rateTrace ?? { count: 5, perMs: 1000 },
    },
    rateLimitsWithoutKeys: {
      read: v.rateRead ?? { count: 0, perMs: 1000 },
      sign: v.rateSign ?? { count: 0, perMs: 1000 },
      wallet_create: v.rateWallets ?? { count: 0, perMs: 60_000 },
      trace: v.rateTrace ?? { count: 0, perMs: 1000 },
    },
  };
}

function limitsOf(v: OptionValues): Config["limits"] {
  return {
    filtersPerKey: v.maxFiltersPerKey,
    subscriptionsPerKey: v.maxSubscriptionsPerKey,
    socketsPerKey: v.maxSocketsPerKey,
    filterAddresses: v.maxFilterAddresses,
    logsRange: v.maxLogsRange,
    logsResults: v.maxLogsResults,
    responseBytes: v.maxResponseMb * MIB,
    answerBytesPerSecond: v.maxAnswerMbPerSecond * MIB,
    concurrentPerKey: v.maxConcurrentPerKey,
  };
}

function webhooksOf(v: OptionValues): Config["webhooks"] {
  return {
    perKey: v.maxWebhooksPerKey,
    allowPrivate: v.webhookAllowPrivate,
    intervalMs: v.webhookIntervalMs,
    retryBaseMs: v.webhookRetryBaseMs,
    retryForMs: v.webhookRetryHours * 3_600_000,
    timeoutMs: v.webhookTimeoutMs,
    balanceCheckMs: v.balanceCheckMs,
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const HELP_WIDTH = 80;

/** Wraps prose to the help's width with a hanging indent, so no row runs past an 80-column terminal. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(indent + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(indent + line);
  return lines;
}

export function helpText(): string {
  const rows = OPTIONS.flatMap((o) => {
    const shown = shownDefault(o);
    // "(embedded)" in the README's table reads "(default embedded)" here.
    const def = shown === undefined ? "" : ` (default ${shown.replace(/^\((.*)\)$/, "$1")})`;
    return [`  ${o.flag} <value>    env ${o.env}`, ...wrap(`${o.help}${def}`, "      ")];
  });
  return [
    "chaingate: EVM node gateway and keystore v3 custody service",
    "",
    "Usage: chaingate [options]",
    "       chaingate contracts deploy [options]",
    "           deploy the member registry and transport endpoints where missing",
    "       chaingate keys create --role admin|user [--name <name>]",
    "       chaingate keys list | keys revoke <id>",
    "       chaingate --help | --version",
    "",
    ...wrap(
      "Every option can be given as a flag, as an environment variable, or as a key of the --config file. Precedence: flag > environment > config file > default.",
      "",
    ),
    "",
    "Options:",
    ...rows,
    "",
    ...wrap(
      "With no upstreams configured, chaingate starts two embedded anvil chains (ids 1001 and 1002).",
      "",
    ),
  ].join("\n");
}

/** The PKCS#11 token for PKCS11 wallets: module, token and PIN file together, or none of them. */
function readPkcs11(v: OptionValues, problems: string[]): Config["custody"]["pkcs11"] {
  const given = [v.pkcs11Module, v.pkcs11Token, v.pkcs11PinFile];
  if (given.every((x) => x === undefined)) return undefined;
  if (given.some((x) => x === undefined)) {
    problems.push(
      "CHAINGATE_PKCS11_MODULE, CHAINGATE_PKCS11_TOKEN and CHAINGATE_PKCS11_PIN_FILE go together: give all three",
    );
    return undefined;
  }
  if (!existsSync(v.pkcs11Module!))
    problems.push(`CHAINGATE_PKCS11_MODULE: ${v.pkcs11Module} does not exist`);
  try {
    readFileSync(v.pkcs11PinFile!, "utf8");
  } catch (error) {
    problems.push(`CHAINGATE_PKCS11_PIN_FILE: cannot read ${v.pkcs11PinFile} (${(error as Error).message})`);
  }
  return {
    module: v.pkcs11Module!,
    token: v.pkcs11Token!,
    pinFile: v.pkcs11PinFile!,
    timeoutMs: v.pkcs11TimeoutMs,
    sessions: v.pkcs11Sessions,
  };
}

/** The unattended-wallet server key, from the environment or a file (never from the data directory). */
function readSealKey(v: OptionValues, problems: string[]): string | undefined {
  if (v.sealKey !== undefined && v.sealKeyFile !== undefined) {
    problems.push("CHAINGATE_SEAL_KEY and CHAINGATE_SEAL_KEY_FILE cannot be used together");
    return undefined;
  }
  let hex = v.sealKey;
  if (v.sealKeyFile !== undefined) {
    const file = resolve(v.sealKeyFile);
    const dir = resolve(v.dataDir);
    if (file === dir || file.startsWith(`${dir}${sep}`)) {
      problems.push(
        `CHAINGATE_SEAL_KEY_FILE: ${v.sealKeyFile} is inside the data directory; keep the key apart from what it seals`,
      );
      return undefined;
    }
    try {
      hex = readFileSync(file, "utf8").trim().replace(/^0x/, "");
    } catch (error) {
      problems.push(`CHAINGATE_SEAL_KEY_FILE: cannot read ${v.sealKeyFile} (${(error as Error).message})`);
      return undefined;
    }
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
      problems.push(
        `CHAINGATE_SEAL_KEY_FILE: ${v.sealKeyFile} must hold 64 hex digits (the value is not shown)`,
      );
      return undefined;
    }
  }
  return hex?.toLowerCase();
}
