/** `npm start` stopped by a signal: a SIGTERM to npm's own pid (systemd, a container runtime) and a Ctrl-C to the whole process group (a terminal) stop chaingate and its chains cleanly. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { anvilsFor, waitUntil } from "../test-support/cli.js";

const root = new URL("../..", import.meta.url).pathname;

/** One `npm start` of a test: its data dir, npm, chaingate's pid and everything both printed. */
interface Started {
  dataDir: string;
  npm: ChildProcess;
  /** chaingate's own pid, read from its log: npm's child once `exec` replaced the shell. */
  gateway: number;
  url: string;
  exited: Promise<void>;
  output: () => string;
}

const started: { dataDir: string; npm: ChildProcess; gateway?: number }[] = [];

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  // Only when a test failed halfway: what it started, by pid.
  for (const { dataDir, npm, gateway } of started) {
    if (npm.exitCode === null && npm.signalCode === null) npm.kill("SIGKILL");
    if (gateway !== undefined && alive(gateway)) process.kill(gateway, "SIGKILL");
    for (const pid of anvilsFor(dataDir)) process.kill(pid, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** `npm start` on a data dir of its own; `group`: in a process group of its own, as a terminal's foreground job. */
async function startNpm(group: boolean): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), "chaingate-npm-start-"));
  // `prestart` builds dist/ first where it is stale (a fresh clone has none): minutes on a busy machine.
  const npm = spawn("npm", ["start"], {
    cwd: root,
    detached: group,
    env: { ...process.env, PORT: "0", CHAINGATE_DATA_DIR: dataDir, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const entry: (typeof started)[number] = { dataDir, npm };
  started.push(entry);
  let output = "";
  const read = (chunk: Buffer) => {
    output += chunk.toString();
  };
  npm.stdout!.on("data", read);
  npm.stderr!.on("data", read);
  const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));
  const ready = await waitUntil(() => /"msg":"chaingate ready"/.test(output), 240_000);
  expect(ready, output.slice(-2000)).toBe(true);
  const line = /"pid":(\d+)[^\n]*"url":"([^"]+)"[^\n]*"msg":"chaingate ready"/.exec(output);
  entry.gateway = Number(line?.[1]);
  expect(entry.gateway).toBeGreaterThan(0);
  expect(anvilsFor(dataDir).length).toBe(2);
  return { dataDir, npm, gateway: entry.gateway, url: line![2]!, exited, output: () => output };
}

async function post(url: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

it("a SIGTERM to npm's pid reaches chaingate: it stops cleanly, its anvils with it", async () => {
  const run = await startNpm(false);
  run.npm.kill("SIGTERM");
  await run.exited;
  // npm forwards the signal to its script's process; with `exec` in the script that process is
  // chaingate itself, not a shell that would die and leave chaingate running without its parent.
  const gone = await waitUntil(() => !alive(run.gateway) && anvilsFor(run.dataDir).length === 0, 30_000);
  expect(gone, run.output().slice(-2000)).toBe(true);
  expect(run.output()).toMatch(/"signal":"SIGTERM"[^\n]*"msg":"chaingate stopped"/);
}, 300_000);

it("Ctrl-C (SIGINT to the whole group) keeps a transfer answered just before it in the chain's saved state, and is not taken for a chain's death", async () => {
  const run = await startNpm(true);
  const wallet = (await post(run.url, "/wallet", {
    type: "KEYSTORE_V3",
    password: "correct horse",
    address_quantity: 1,
  })) as { id: string }[];
  const sent = (await post(run.url, "/transaction", {
    wallet_id: wallet[0]!.id,
    password: "correct horse",
    index: 0,
    transaction: { to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value: "1000" },
  })) as { tx_hash: string };
  expect(sent.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  // A terminal signals its foreground process group: npm, chaingate, the guards and (before
  // decision 215) the anvils all at once; an anvil that died first lost the blocks since the
  // guard's last periodic save, and chaingate logged its death and began a restart.
  process.kill(-run.npm.pid!, "SIGINT");
  await run.exited;
  const gone = await waitUntil(() => !alive(run.gateway) && anvilsFor(run.dataDir).length === 0, 30_000);
  const output = run.output();
  expect(gone, output.slice(-2000)).toBe(true);
  expect(output).toMatch(/"signal":"SIGINT"[^\n]*"msg":"chaingate stopped"/);
  expect(output).not.toMatch(/embedded chain died|embedded chain restart/);
  const state = readFileSync(join(run.dataDir, "devnet", "1001", "state.json"), "utf8");
  expect(state).toContain(sent.tx_hash.slice(2));
}, 300_000);
