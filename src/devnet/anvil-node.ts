/** One embedded anvil chain: started under a guard that ends it with chaingate, whatever way chaingate ends. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Logger } from "pino";
import { ChaingateError } from "../errors/chaingate-error.js";
import { anvilBinaryPath } from "./anvil-binary.js";

export interface AnvilOptions {
  chainId: number;
  /** Directory holding this chain's state file and pidfile. */
  dir: string;
  blockTime: number;
  logger: Logger;
  startTimeoutMs?: number;
  /** A fixed port (tests that bring a node back at the same address); a free one when absent. */
  port?: number;
}

export interface AnvilNode {
  readonly chainId: number;
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * The guard: runs anvil in the background and waits on stdin. chaingate holds the other end of
 * that pipe; when chaingate exits for any reason (even SIGKILL) the pipe closes, `read` returns,
 * and the guard stops anvil with SIGTERM, which also makes anvil write its state file.
 */
const GUARD = [
  '"$@" &',
  "child=$!",
  'echo "chaingate-anvil-pid $child"',
  "trap 'kill -TERM \"$child\" 2>/dev/null' INT TERM HUP",
  "read -r _line || true",
  'kill -TERM "$child" 2>/dev/null',
  'wait "$child"',
].join("\n");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isOurAnvil(pid: number, statePath: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return argv[0]?.endsWith("anvil") === true && argv.includes(statePath);
  } catch {
    return false;
  }
}

/** A previous anvil on this state file (chaingate was killed) is waited for, then killed if stuck. */
async function clearStale(pidFile: string, statePath: string, logger: Logger): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (Number.isSafeInteger(pid) && pid > 0 && isOurAnvil(pid, statePath)) {
    logger.warn({ pid }, "previous embedded anvil still running; waiting for it to save its state");
    const deadline = Date.now() + 10_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) {
      logger.warn({ pid }, "previous embedded anvil did not exit; killing it");
      process.kill(pid, "SIGKILL");
    }
  }
  rmSync(pidFile, { force: true });
}

export async function startAnvil(options: AnvilOptions): Promise<AnvilNode> {
  const { chainId, dir, blockTime, logger } = options;
  mkdirSync(dir, { recursive: true });
  const statePath = join(dir, "state.json");
  const pidFile = join(dir, "anvil.pid");
  await clearStale(pidFile, statePath, logger);

  const args = [
    anvilBinaryPath(),
    "--host",
    "127.0.0.1",
    "--port",
    String(options.port ?? 0),
    "--chain-id",
    String(chainId),
    "--state",
    statePath,
    "--state-interval",
    "2",
    ...(blockTime > 0 ? ["--block-time", String(blockTime)] : []),
  ];
  const child: ChildProcessWithoutNullStreams = spawn(
    "/bin/sh",
    ["-c", GUARD, "chaingate-anvil-guard", ...args],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  const log = logger.child({ chainId, component: "anvil" });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  let anvilPid = 0;
  let url = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`anvil for chain ${chainId} did not start listening in time`)),
      options.startTimeoutMs ?? 30_000,
    );
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`anvil for chain ${chainId} exited with code ${code} before listening`));
    });
    // Both streams are drained for the life of the process, or a full pipe would block anvil.
    createInterface({ input: child.stdout }).on("line", (line) => {
      const pidMatch = /^chaingate-anvil-pid (\d+)$/.exec(line);
      if (pidMatch) {
        anvilPid = Number(pidMatch[1]);
        writeFileSync(pidFile, String(anvilPid));
        return;
      }
      const listening = /Listening on (\S+):(\d+)/.exec(line);
      if (listening && !url) {
        url = `http://${listening[1]}:${listening[2]}`;
        clearTimeout(timer);
        resolve();
      }
      log.trace({ line }, "anvil output");
    });
    createInterface({ input: child.stderr }).on("line", (line) => log.debug({ line }, "anvil stderr"));
  });
  // Keep the guard alive on our side: an unexpected stdin error must not crash chaingate.
  child.stdin.on("error", () => {});

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 15_000).unref());
    if ((await Promise.race([exited, timeout])) === "timeout") {
      log.warn("anvil did not stop in time; killing it");
      if (anvilPid && alive(anvilPid)) process.kill(anvilPid, "SIGKILL");
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(pidFile, { force: true });
  };

  try {
    await ready;
  } catch (error) {
    await stop();
    throw new ChaingateError((error as Error).message, { code: "DEVNET_START_FAILED", cause: error });
  }
  log.info({ url, pid: anvilPid }, "embedded chain started");
  return { chainId, url, pid: anvilPid, stop };
}
