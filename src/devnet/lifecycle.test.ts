import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** Every live anvil process whose command line names this data dir. */
function anvilsFor(dataDir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        // The anvil binary itself (not its sh guard); zombies have exited and only await reaping.
        return (
          argv[0]?.endsWith("/anvil") === true && argv.some((a) => a.includes(dataDir)) && !/\) Z /.test(stat)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

interface Started {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** Runs the real CLI (src/main.ts under tsx) and waits for its "chaingate ready" log line. */
async function startCli(dataDir: string): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: {
      ...process.env,
      PORT: "0",
      CHAINGATE_DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      CHAINGATE_KDF: "light",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
  return { child, url, exited };
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(`${url}/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

describe("the embedded chains live and die with chaingate", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "chaingate-lifecycle-"));
  afterAll(() => {
    for (const pid of anvilsFor(dataDir)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("SIGTERM stops chaingate and both anvils; the chain state survives the restart", async () => {
    const first = await startCli(dataDir);
    expect(anvilsFor(dataDir)).toHaveLength(2);
    expect(await rpc(first.url, "eth_chainId")).toBe("0x3e9");
    await rpc(first.url, "eth_sendTransaction", [
      {
        from: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        to: "0x70997970C51812DC3A010C7901B1FCcCCc3F7Aa2",
        value: "0x1",
      },
    ]);
    const head = Number(await rpc(first.url, "eth_blockNumber"));
    expect(head).toBeGreaterThanOrEqual(1);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await waitFor(() => anvilsFor(dataDir).length === 0, 5_000)).toBe(true);

    const second = await startCli(dataDir);
    expect(Number(await rpc(second.url, "eth_blockNumber"))).toBe(head);
    second.child.kill("SIGTERM");
    await second.exited;
    expect(await waitFor(() => anvilsFor(dataDir).length === 0, 5_000)).toBe(true);
  });

  it("kill -9 of chaingate leaves no anvil behind, and the next start works", async () => {
    const victim = await startCli(dataDir);
    expect(anvilsFor(dataDir)).toHaveLength(2);
    victim.child.kill("SIGKILL");
    await victim.exited;
    expect(await waitFor(() => anvilsFor(dataDir).length === 0, 10_000)).toBe(true);

    const next = await startCli(dataDir);
    expect(await rpc(next.url, "eth_chainId")).toBe("0x3e9");
    expect(anvilsFor(dataDir)).toHaveLength(2);
    next.child.kill("SIGTERM");
    await next.exited;
    expect(await waitFor(() => anvilsFor(dataDir).length === 0, 5_000)).toBe(true);
  });
});
