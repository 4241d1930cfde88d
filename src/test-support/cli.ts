/** Runs the real CLI (src/main.ts under tsx) in a child process, for tests of the whole program. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { STATE_ENV } from "../devnet/anvil-guard.js";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

export interface Cli {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** Everything the process wrote to stdout and stderr so far. */
  output: () => string;
}

/** Every CLI a test started: killed by `killStartedClis` even when an assertion failed halfway. */
const started = new Set<ChildProcess>();

export function killStartedClis(): void {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  started.clear();
}

export async function startCli(dataDir: string, env: Record<string, string | undefined> = {}): Promise<Cli> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: {
      ...process.env,
      PORT: "0",
      CHAINGATE_DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      CHAINGATE_KDF: "light",
      CHAINGATE_RATE_SIGN: "0",
      CHAINGATE_RATE_WALLETS: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chaingate did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"chaingate ready"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    exited.then(() => reject(new Error(`chaingate exited during start:\n${output}`)));
  });
  return { child, url, exited, output: () => output };
}

/** Every live anvil process (not its sh guard, not a zombie) whose command line names this data dir. */
export function anvilsFor(dataDir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        // A first start has no state file to load yet: its data dir shows only in the state path it inherits.
        const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return (
          argv[0]?.endsWith("/anvil") === true &&
          env.some((entry) => entry.startsWith(`${STATE_ENV}=`) && entry.includes(dataDir)) &&
          !/\) Z /.test(stat)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

export async function waitUntil(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

export async function rpc(url: string, method: string, params: unknown[] = [], query = ""): Promise<unknown> {
  const response = await fetch(`${url}/${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/**
 * A data folder for the CLIs of this file: after it, every CLI it started is killed, their anvils
 * are waited for (and killed if they outlive them), and the folder removed.
 */
export function cliDataDir(name: string): string {
  const dataDir = mkdtempSync(join(tmpdir(), `chaingate-${name}-`));
  afterAll(async () => {
    killStartedClis();
    await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000);
    for (const pid of anvilsFor(dataDir)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });
  return dataDir;
}

/** A Native call's result (`POST /<path>` with `params` as its one parameter); an error answer throws. */
export async function nativeResult(
  url: string,
  path: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, params: [params] }),
  });
  const json = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (json.error) throw new Error(`${path}: ${JSON.stringify(json.error)}`);
  return json.result!;
}
