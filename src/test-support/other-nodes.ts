/** Hardhat's node (EDR) and Ganache from npm, started offline on free ports for tests; each stopped by its own pid. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { DEV_PRIVATE_KEY } from "./evm-fixtures.js";
import { freePort } from "./ports.js";

const require = createRequire(import.meta.url);
const ROOT = new URL("../..", import.meta.url).pathname;

export interface OtherNode {
  kind: "hardhat" | "ganache";
  url: string;
  chainId: number;
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(2_000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

async function started(
  kind: OtherNode["kind"],
  child: ChildProcess,
  url: string,
  chainId: number,
): Promise<OtherNode> {
  let output = "";
  child.stdout?.on("data", (c: Buffer) => {
    if (output.length < 20_000) output += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    if (output.length < 20_000) output += c.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Generous: a busy two-core CI machine loads EDR or Ganache in seconds, sometimes many.
  const deadline = Date.now() + 90_000;
  while (!(await answers(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${kind} did not start: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    kind,
    url,
    chainId,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise((r) => setTimeout(() => r(false), 5_000)),
      ]);
      if (!stopped) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}

/**
 * Hardhat's node (hardhat@2, the EDR engine), automining, with `chainId`. Its first dev account is
 * anvil's (the same mnemonic), so the tests' operator key is funded there too.
 */
export async function startHardhat(dir: string, chainId: number): Promise<OtherNode> {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "hardhat.config.cjs");
  writeFileSync(config, `module.exports = { networks: { hardhat: { chainId: ${chainId} } } };\n`);
  const port = await freePort();
  const cli = require.resolve("hardhat/internal/cli/cli.js");
  const child = spawn(
    process.execPath,
    [cli, "node", "--hostname", "127.0.0.1", "--port", String(port), "--config", config],
    {
      // Hardhat refuses to run unless the config's project resolves this same hardhat package (HH12).
      cwd: ROOT,
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", DO_NOT_TRACK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  return started("hardhat", child, `http://127.0.0.1:${port}`, chainId);
}

/**
 * Ganache 7.9 (its newest hardfork is Shanghai: no Cancun opcodes), instamine, with `chainId`;
 * anvil's first dev key holds 10,000 ETH there, like on the other nodes.
 */
export async function startGanache(chainId: number): Promise<OtherNode> {
  const port = await freePort();
  const cli = require.resolve("ganache/dist/node/cli.js");
  const child = spawn(
    process.execPath,
    [
      cli,
      "--server.host",
      "127.0.0.1",
      "--server.port",
      String(port),
      "--chain.chainId",
      String(chainId),
      "--wallet.accounts",
      `${DEV_PRIVATE_KEY},0x${(10n ** 22n).toString(16)}`,
      "--logging.quiet",
    ],
    { env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  return started("ganache", child, `http://127.0.0.1:${port}`, chainId);
}

/** Hardhat's node (chain 31337, its state under `dir`) and Ganache (chain 1337) started side by side, by chain id. */
export async function startHardhatAndGanache(dir: string): Promise<Map<number, OtherNode>> {
  const [hardhat, ganache] = await Promise.all([
    startHardhat(join(dir, "hardhat"), 31337),
    startGanache(1337),
  ]);
  return new Map([
    [31337, hardhat],
    [1337, ganache],
  ]);
}
