#!/usr/bin/env node
/** The chaingate CLI: parses options, starts the runtime, stops it cleanly on signals. */
import { readFileSync } from "node:fs";
import { pino } from "pino";
import { ConfigError, helpText, loadConfig } from "./config/load-config.js";
import { startChaingate } from "./runtime.js";

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${helpText()}\n`);
    return;
  }
  if (argv.includes("--version")) {
    process.stdout.write(`${version()}\n`);
    return;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ env: process.env, argv });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`chaingate: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel });
  let runtime: Awaited<ReturnType<typeof startChaingate>>;
  try {
    runtime = await startChaingate(config, { logger });
  } catch (error) {
    logger.fatal({ err: error }, "chaingate could not start");
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    runtime.stop().finally(() => process.exit(0));
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("uncaughtException", (error) => {
    logger.fatal({ err: error }, "uncaught exception; stopping");
    runtime.stop().finally(() => process.exit(1));
  });
}

await main(process.argv.slice(2));
