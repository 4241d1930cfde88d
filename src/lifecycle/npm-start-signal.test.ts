/** `npm start` under a supervisor: a SIGTERM sent to npm's own pid (what systemd or a container runtime sends) stops chaingate and its chains. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { anvilsFor, waitUntil } from "../test-support/cli.js";

const root = new URL("../..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "chaingate-npm-start-"));
let npm: ChildProcess | undefined;
/** chaingate's own pid, read from its log: npm's child once `exec` replaced the shell. */
let gateway: number | undefined;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  // Only when the test failed halfway: what it started, by pid.
  if (npm && npm.exitCode === null && npm.signalCode === null) npm.kill("SIGKILL");
  if (gateway !== undefined && alive(gateway)) process.kill(gateway, "SIGKILL");
  for (const pid of anvilsFor(dataDir)) process.kill(pid, "SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

it("a SIGTERM to npm's pid reaches chaingate: it stops cleanly, its anvils with it", async () => {
  // `prestart` builds dist/ first where it is stale (a fresh clone has none): minutes on a busy machine.
  npm = spawn("npm", ["start"], {
    cwd: root,
    env: { ...process.env, PORT: "0", CHAINGATE_DATA_DIR: dataDir, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const read = (chunk: Buffer) => {
    output += chunk.toString();
  };
  npm.stdout!.on("data", read);
  npm.stderr!.on("data", read);
  const exited = new Promise<void>((resolve) => npm!.once("exit", () => resolve()));
  const ready = await waitUntil(() => /"msg":"chaingate ready"/.test(output), 240_000);
  expect(ready, output.slice(-2000)).toBe(true);
  gateway = Number(/"pid":(\d+)[^\n]*"msg":"chaingate ready"/.exec(output)?.[1]);
  expect(gateway).toBeGreaterThan(0);
  expect(anvilsFor(dataDir).length).toBe(2);

  npm.kill("SIGTERM");
  await exited;
  // npm forwards the signal to its script's process; with `exec` in the script that process is
  // chaingate itself, not a shell that would die and leave chaingate running without its parent.
  const gone = await waitUntil(() => !alive(gateway!) && anvilsFor(dataDir).length === 0, 30_000);
  expect(gone, output.slice(-2000)).toBe(true);
  expect(output).toMatch(/"signal":"SIGTERM"[^\n]*"msg":"chaingate stopped"/);
}, 300_000);
