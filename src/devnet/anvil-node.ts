/** One embedded anvil chain: started under a guard that ends it with chaingate, whatever way chaingate ends. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Logger } from "pino";
import { ChaingateError } from "../errors/chaingate-error.js";
import { anvilBinaryPath } from "./anvil-binary.js";
import { GUARD_SIGNAL_EXITS, guardCommand, STATE_ENV } from "./anvil-guard.js";

export interface AnvilOptions {
  chainId: number;
  /** Directory holding this chain's state file and pidfile. */
  dir: string;
  blockTime: number;
  logger: Logger;
  startTimeoutMs?: number;
  /** A fixed port (tests that bring a node back at the same address); a free one when absent. */
  port?: number;
  /** Keep the state of only this many recent blocks (`--prune-history`): a pruned node, for tests of history-aware routing. */
  pruneHistory?: number;
}

/** running; restarting after it died; failed once the restarts ran out. */
export type AnvilStatus = "running" | "restarting" | "failed";

export interface AnvilNode {
  readonly chainId: number;
  readonly url: string;
  /** The current anvil process (a new one after each restart). */
  readonly pid: number;
  readonly status: AnvilStatus;
  /** Times the supervisor brought it back after it died. */
  readonly restarts: number;
  stop(): Promise<void>;
}

/** Consecutive failed restarts before the supervisor gives up (the chain stays down, /readyz says so). */
const MAX_RESTART_ATTEMPTS = 8;
/** How long a guard stopped by a signal waits for chaingate's own stop before it counts as a death. */
const SIGNALLED_GRACE_MS = 5_000;
/** A node that stays up this long has recovered: its attempt count starts again. */
const STABLE_AFTER_MS = 30_000;

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
    const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    return argv[0]?.endsWith("anvil") === true && env.includes(`${STATE_ENV}=${statePath}`);
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

interface Spawned {
  pid: number;
  url: string;
  exited: Promise<number | null>;
  /** Ends the guard, which saves anvil's state a last time and stops it. */
  stop(): Promise<void>;
}

/** anvil's command line: loopback, the chain id, and its last saved state when there is one (the guard saves it). */
function anvilArgs(options: AnvilOptions, statePath: string): string[] {
  const { chainId, blockTime } = options;
  return [
    anvilBinaryPath(),
    "--host",
    "127.0.0.1",
    "--port",
    String(options.port ?? 0),
    "--chain-id",
    String(chainId),
    ...(existsSync(statePath) ? ["--load-state", statePath] : []),
    ...(blockTime > 0 ? ["--block-time", String(blockTime)] : []),
    ...(options.pruneHistory === undefined ? [] : ["--prune-history", String(options.pruneHistory)]),
  ];
}

async function spawnAnvil(options: AnvilOptions, statePath: string, pidFile: string): Promise<Spawned> {
  const { chainId, logger } = options;
  const args = anvilArgs(options, statePath);
  const guard = guardCommand(args, statePath);
  const child: ChildProcessWithoutNullStreams = spawn(guard.command, guard.args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: guard.env,
  });
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
  return { pid: anvilPid, url, exited, stop };
}

/**
 * Starts anvil and supervises it: when it dies (a crash, the OOM killer, kill -9) it is started
 * again on the same port from its saved state, with back-off, a bounded number of times in a row.
 */
export async function startAnvil(options: AnvilOptions): Promise<AnvilNode> {
  const { dir, logger } = options;
  mkdirSync(dir, { recursive: true });
  const statePath = join(dir, "state.json");
  const pidFile = join(dir, "anvil.pid");
  await clearStale(pidFile, statePath, logger);
  const first = await spawnAnvil(options, statePath, pidFile);
  return new AnvilSupervisor(options, first, statePath, pidFile);
}

/** One embedded node and the process now serving it: restarted when it dies, until stopped. */
class AnvilSupervisor implements AnvilNode {
  readonly chainId: number;
  readonly url: string;
  private readonly port: number;
  private readonly log: Logger;
  private stopping = false;
  private state: AnvilStatus = "running";
  private restartCount = 0;
  private restarting: Promise<void> | undefined;
  /** Ends the back-off between restarts early when chaingate stops. */
  private wake: () => void = () => {};

  constructor(
    private readonly options: AnvilOptions,
    private current: Spawned,
    private readonly statePath: string,
    private readonly pidFile: string,
  ) {
    this.chainId = options.chainId;
    this.url = current.url;
    this.port = Number(new URL(current.url).port);
    this.log = options.logger.child({ chainId: options.chainId, component: "anvil" });
    this.supervise(current, Date.now(), 0);
    this.log.info({ url: current.url, pid: current.pid }, "embedded chain started");
  }

  get pid(): number {
    return this.current.pid;
  }

  get status(): AnvilStatus {
    return this.state;
  }

  get restarts(): number {
    return this.restartCount;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.restarting;
    await this.current.stop();
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private supervise(spawned: Spawned, startedAt: number, attempt: number): void {
    void spawned.exited.then(async (code) => {
      if (this.stopping || spawned !== this.current) return;
      // A guard stopped by a signal was most likely sent it with chaingate's whole process group
      // (Ctrl-C, `kill -- -<pgid>`): chaingate's own stop is given a moment before this counts as a
      // death, so a stop is not logged as one nor met with a restart (decision 215).
      if (code !== null && GUARD_SIGNAL_EXITS.has(code)) {
        // Down meanwhile, whichever it turns out to be: /network and /readyz say so.
        this.state = "restarting";
        await this.pause(SIGNALLED_GRACE_MS);
        if (this.stopping) return;
      }
      this.state = "restarting";
      const failures = Date.now() - startedAt >= STABLE_AFTER_MS ? 0 : attempt;
      this.log.error(
        { pid: spawned.pid, attempt: failures + 1 },
        "embedded chain died; restarting it from its saved state",
      );
      this.restarting = this.restart(failures).catch((error: unknown) => {
        this.state = "failed";
        this.log.fatal({ err: error }, "embedded chain could not be restarted; it stays down");
      });
    });
  }

  private async restart(failures: number): Promise<void> {
    const { statePath, pidFile, log } = this;
    for (let attempt = failures; attempt < MAX_RESTART_ATTEMPTS; attempt++) {
      await this.pause(Math.min(250 * 2 ** attempt, 10_000));
      if (this.stopping) return;
      // A state file cut off mid-write cannot be loaded: after two refusals it is set aside.
      if (attempt - failures === 2 && existsSync(statePath)) {
        const aside = `${statePath}.unreadable-${Date.now()}`;
        renameSync(statePath, aside);
        log.error({ aside }, "embedded chain's state file could not be loaded; starting from an empty chain");
      }
      try {
        await clearStale(pidFile, statePath, this.options.logger);
        const spawned = await spawnAnvil({ ...this.options, port: this.port }, statePath, pidFile);
        if (this.stopping) {
          await spawned.stop();
          return;
        }
        this.current = spawned;
        this.state = "running";
        this.restartCount++;
        log.warn({ pid: spawned.pid, restarts: this.restartCount }, "embedded chain restarted");
        this.supervise(spawned, Date.now(), attempt + 1);
        return;
      } catch (error) {
        log.error({ err: error, attempt: attempt + 1 }, "embedded chain restart failed");
      }
    }
    this.state = "failed";
    log.fatal({ attempts: MAX_RESTART_ATTEMPTS }, "embedded chain could not be restarted; it stays down");
  }
}
