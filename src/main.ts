#!/usr/bin/env node
/** The chaingate CLI: parses options, starts the runtime, stops it cleanly on signals. */
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { parseKeysCommand, runKeysCommand } from "./auth/keys-command.js";
import { ConfigError, helpText, loadConfig } from "./config/load-config.js";
import { createLogger } from "./logging/create-logger.js";
import { finishLog } from "./logging/finish-log.js";
import { parsePoliciesCommand, runPoliciesCommand } from "./policies/policies-command.js";
import { startChaingate } from "./runtime.js";
import { parseWalletsCommand, runWalletsCommand } from "./wallets/wallets-command.js";

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

async function main(argv: string[]): Promise<void> {
  if (await subcommand(argv)) return;
  const deployOnly = argv[0] === "contracts";
  if (deployOnly && argv[1] !== "deploy") {
    process.stderr.write("chaingate: usage: chaingate contracts deploy [options]\n");
    process.exitCode = 2;
    return;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ env: process.env, argv: deployOnly ? argv.slice(2) : argv });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`chaingate: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  if (deployOnly) {
    await deployContracts(config, logger);
    return;
  }
  let runtime: Awaited<ReturnType<typeof startChaingate>>;
  try {
    runtime = await startChaingate(config, { logger });
  } catch (error) {
    logger.fatal({ err: error }, "chaingate could not start");
    process.exitCode = 1;
    return;
  }
  stopOnSignals(runtime, config, logger);
}

/** --help, --version, and the keys, policies and wallets commands: answers whether `argv` was one. */
async function subcommand(argv: string[]): Promise<boolean> {
  if (argv.includes("--help") || argv.includes("-h")) process.stdout.write(`${helpText()}\n`);
  else if (argv.includes("--version")) process.stdout.write(`${version()}\n`);
  else if (argv[0] === "keys") await keys(argv.slice(1));
  else if (argv[0] === "policies") await policies(argv.slice(1));
  else if (argv[0] === "wallets") await walletsCommand(argv.slice(1));
  else return false;
  return true;
}

/**
 * SIGINT and SIGTERM stop the runtime within the shutdown timeout; an uncaught exception stops it
 * too, within the same bound, and the process then exits 1. There is one stop: a signal or an
 * exception during it joins it rather than starting another, with one timer, one "shutting down"
 * line and one exit (decision 242; the runtime's step list itself answers a second run only when
 * the first ends).
 */
function stopOnSignals(
  runtime: Awaited<ReturnType<typeof startChaingate>>,
  config: ReturnType<typeof loadConfig>,
  logger: Logger,
): void {
  let stopping = false;
  /** 1 once an uncaught exception has been seen, whatever began the stop. */
  let exitCode = 0;
  const stop = (cause: { signal: string } | { cause: "uncaught exception" }) => {
    if (stopping) return;
    stopping = true;
    logger.info(cause, "shutting down");
    // In-flight requests get a bounded time; then the process ends anyway (the anvils' guards stop them).
    setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, "shutdown took too long; exiting");
      exitAfterLog(logger, 1);
    }, config.shutdownTimeoutMs + 2_000).unref();
    const started = Date.now();
    runtime.stop().then(
      () => {
        // The last line an operator sees: the stop finished (not cut off by the timeout above).
        logger.info({ ...cause, elapsedMs: Date.now() - started }, "chaingate stopped");
        exitAfterLog(logger, exitCode);
      },
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed; exiting");
        exitAfterLog(logger, 1);
      },
    );
  };
  process.on("SIGINT", () => stop({ signal: "SIGINT" }));
  process.on("SIGTERM", () => stop({ signal: "SIGTERM" }));
  process.on("uncaughtException", (error) => {
    logger.fatal({ err: error }, "uncaught exception; stopping");
    exitCode = 1;
    stop({ cause: "uncaught exception" });
  });
}

/**
 * Exits once the log's queued lines are written, or after FINAL_LOG_BUDGET_MS with them dropped: a
 * reader that has stopped (a full pipe nobody reads) would otherwise hold the exit forever
 * (decision 241).
 */
function exitAfterLog(logger: Logger, code: number): void {
  finishLog(logger).then(
    () => process.exit(code),
    () => process.exit(code),
  );
}

/** `chaingate keys ...`: API keys in the configured store. */
async function keys(argv: string[]): Promise<void> {
  try {
    const command = parseKeysCommand(argv);
    const config = loadConfig({ env: process.env, argv: command.rest });
    const output = await runKeysCommand(command, config);
    if (output !== "") process.stdout.write(`${output}\n`);
  } catch (error) {
    process.stderr.write(`chaingate: ${(error as Error).message}\n`);
    process.exitCode = error instanceof ConfigError ? 2 : 1;
  }
}

/** `chaingate wallets assign ...`: a wallet given to an API key. */
async function walletsCommand(argv: string[]): Promise<void> {
  try {
    const command = parseWalletsCommand(argv);
    const config = loadConfig({ env: process.env, argv: command.rest });
    process.stdout.write(`${await runWalletsCommand(command, config)}\n`);
  } catch (error) {
    process.stderr.write(`chaingate: ${(error as Error).message}\n`);
    process.exitCode = error instanceof ConfigError ? 2 : 1;
  }
}

/** `chaingate policies ...`: signing policies in the configured store. */
async function policies(argv: string[]): Promise<void> {
  try {
    const command = parsePoliciesCommand(argv);
    const config = loadConfig({ env: process.env, argv: command.rest });
    const output = await runPoliciesCommand(command, config);
    if (output !== "") process.stdout.write(`${output}\n`);
  } catch (error) {
    process.stderr.write(`chaingate: ${(error as Error).message}\n`);
    process.exitCode = error instanceof ConfigError ? 2 : 1;
  }
}

/** `chaingate contracts deploy`: deploys what is missing on every configured chain, prints the addresses. */
async function deployContracts(config: ReturnType<typeof loadConfig>, logger: Logger) {
  try {
    const runtime = await startChaingate(config, {
      logger,
      listen: false,
      deployContracts: true,
      relay: false,
    });
    const system = runtime.system;
    await runtime.stop();
    if (!system) throw new Error("no operator key: set CHAINGATE_OPERATOR_KEY or --operator-key");
    process.stdout.write(
      `${JSON.stringify({ operator: system.operator.address, registry: system.registry, endpoint: system.endpoint, home_chain_id: system.homeChainId })}\n`,
    );
  } catch (error) {
    logger.fatal({ err: error }, "deploying the contracts failed");
    process.exitCode = 1;
  }
}

await main(process.argv.slice(2));
