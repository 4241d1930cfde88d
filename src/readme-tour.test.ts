/** Runs the README's curl tour against a fresh start of the real CLI and compares each answer with the shape the README prints. */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { anvilsFor, killStartedClis, startCli, waitUntil } from "./test-support/cli.js";

const run = promisify(execFile);
const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");

interface Step {
  command: string;
  /** The answer the README prints after `# ` (on the next line or at the end of the line), if any. */
  expected?: string;
}

/** The tour's commands, continuation lines joined, each with the answer the README shows for it. */
function tourSteps(readme: string): Step[] {
  const start = readme.indexOf("## A 5-minute tour");
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start))?.[1] ?? "";
  const steps: Step[] = [];
  let pending = "";
  for (const raw of block.split("\n")) {
    const line = raw.trimEnd();
    if (pending !== "") {
      pending += ` ${line.replace(/\\$/, "").trim()}`;
      if (!line.endsWith("\\")) {
        steps.push(split(pending));
        pending = "";
      }
      continue;
    }
    if (/^# [[{]/.test(line)) {
      const last = steps.at(-1);
      if (last !== undefined && last.expected === undefined) last.expected = answerOf(line.slice(2));
      continue;
    }
    if (line === "" || line.startsWith("#") || line.startsWith("open ")) continue;
    if (line.endsWith("\\")) pending = line.slice(0, -1).trim();
    else steps.push(split(line));
  }
  return steps;
}

function split(line: string): Step {
  const at = line.search(/\s+# [[{]/);
  if (at < 0) return { command: line.replace(/\s+#.*$/, "") };
  return { command: line.slice(0, at), expected: answerOf(line.slice(at).trim().slice(2)) };
}

/** The printed answer without the README's own remark after it (`   (why)`). */
function answerOf(shown: string): string {
  return shown.replace(/\s{2,}\(.*\)$/, "");
}

/** The README's answer as a pattern: `"<uuid>"`, `"0x..."` and `...` stand for what a run fills in. */
function shapeOf(expected: string): RegExp {
  const escaped = expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = escaped
    .replaceAll('"<uuid>"', '"[0-9a-f-]{36}"')
    .replace(/0x([0-9a-fA-F]*)\\\.\\\.\\\./g, "0x$1[0-9a-fA-F]*")
    .replaceAll("\\.\\.\\.", ".*")
    // The README spaces its elisions (`}, ...]`); the wire has no spaces.
    .replaceAll(", ", ",\\s*");
  return new RegExp(`^${pattern}$`, "s");
}

const dataDir = mkdtempSync(join(tmpdir(), "chaingate-tour-"));
afterAll(async () => {
  killStartedClis();
  await waitUntil(() => anvilsFor(dataDir).length === 0, 10_000);
  rmSync(dataDir, { recursive: true, force: true });
});

it("the tour is read from the README (every section, each shown answer beside its command)", () => {
  const steps = tourSteps(README);
  expect(steps.length).toBeGreaterThan(20);
  expect(steps.filter((s) => s.expected !== undefined).length).toBeGreaterThan(8);
  expect(
    shapeOf('{"id":"<uuid>","a":"0x04...","b":[1, ...]}').test(
      '{"id":"0b5c2f5e-1111-4a4a-8888-0123456789ab","a":"0x04ab","b":[1, 2, 3]}',
    ),
  ).toBe(true);
  expect(shapeOf('{"result":"0x2"}').test('{"result":"0x3"}')).toBe(false);
});

it("every command of the README's tour answers what the README shows, on a fresh start with the defaults", async () => {
  // The defaults a newcomer's `npm start` has: the standard KDF, no rate limits without keys.
  const cli = await startCli(dataDir, {
    CHAINGATE_KDF: "standard",
    CHAINGATE_RATE_SIGN: undefined,
    CHAINGATE_RATE_WALLETS: undefined,
  });
  const port = new URL(cli.url).port;
  const vars: Record<string, string> = {};
  const shell: Record<string, string> = {};
  const seen: string[] = [];
  for (const step of tourSteps(README)) {
    let command = step.command.replaceAll("localhost:8545", `localhost:${port}`);
    for (const [name, value] of Object.entries(vars)) command = command.replaceAll(name, value);
    // A line that sets a shell variable is run with the lines that use it (the tour's filter lines).
    const assigned = /^([A-Z]+)=\$\(/.exec(command)?.[1];
    const script = assigned ? `${command}; echo "$${assigned}"` : command;
    const { stdout } = await run("bash", ["-c", script], {
      env: { ...process.env, ...shell },
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const answer = stdout.trim();
    seen.push(`$ ${command}\n${answer.slice(0, 300)}`);
    if (assigned) shell[assigned] = answer;
    if (step.expected !== undefined) {
      expect(answer, `${command}\nREADME shows: ${step.expected}`).toMatch(shapeOf(step.expected));
    }
    // Whatever the README does not print must still be an answer, not an error.
    expect(answer, command).not.toBe("");
    if (step.expected === undefined) expect(failureIn(answer), command).toBeUndefined();
    learn(command, answer, vars);
  }
  if (process.env.TOUR_DEBUG) console.log(seen.join("\n\n"));
}, 600_000);

/** A JSON-RPC error or an HTTP problem at the top of an answer (a batch's members included); text answers pass. */
function failureIn(answer: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(answer);
  } catch {
    return undefined;
  }
  for (const item of Array.isArray(body) ? body : [body]) {
    const top = item as { error?: unknown; status?: unknown };
    if (top.error !== undefined || (typeof top.status === "number" && top.status >= 400)) {
      return answer.slice(0, 500);
    }
  }
  return undefined;
}

/** The placeholders later commands use, filled from the answers of earlier ones. */
function learn(command: string, answer: string, vars: Record<string, string>): void {
  if (/\/wallet -H/.test(command)) {
    const [first] = JSON.parse(answer) as { id: string; address: string }[];
    vars["<uuid>"] = first!.id;
    vars["<address>"] = first!.address;
  }
  if (command.includes("/create_new_ERC20_token")) {
    const token = (JSON.parse(answer) as { result: { address: string } }).result.address;
    vars['"token":"0x..."'] = `"token":"${token}"`;
    vars['"to":"0x..."'] = `"to":"${vars["<address>"]}"`;
  }
}
