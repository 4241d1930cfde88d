/**
 * chaingate under two sets of Node flags (or two configurations, or two builds), side by side in one run: cache hits and forwarded reads
 * measured with wrk against two processes of this build, rounds alternating A and B (ABBA), each
 * round's B/A ratio of rate and of CPU a request (user + system from /proc, every thread) reported
 * with its min, median and max over rounds.
 * - both sides run `npm start`'s flags; BENCH_FLAGS_A and BENCH_FLAGS_B (space-separated, none by
 *   default) come after them, so a later flag wins (`--no-single-threaded-gc` takes back one that
 *   `npm start` gives);
 * - a cache hit is `eth_getBlockByHash` of one block on `POST /`; a forwarded read is `eth_getBalance`
 *   of a distinct address each (neither cache nor coalescing answers it), each round's addresses new;
 * - BENCH_CASES (`hit,fill,forwarded,hit`): the cases in order; `fill` runs BENCH_FILL_SECONDS (30) of
 *   distinct reads on each side, uncounted, so the hits after it are those of a process whose
 *   response cache is full and whose code has served misses (as in service);
 * - BENCH_ROUNDS (8) rounds of BENCH_SECONDS (5) a side for each counted case, 32 connections, after
 *   3 s of each case on each side to warm up; request logging off on both (as `bench:gateway-wrk`'s
 *   ratio rounds), BENCH_LOG_REQUESTS=true for `npm start`'s default;
 * - BENCH_ENV_A and BENCH_ENV_B (`NAME=value` pairs, space-separated) over one side's environment,
 *   BENCH_MAIN_A and BENCH_MAIN_B another build's `dist/main.js` for one side: two configurations or
 *   two builds side by side under the same flags; BENCH_LOG_READER=stalled leaves the gateways'
 *   output unread once they are ready (a log collector that stopped: with BENCH_LOG_REQUESTS=true
 *   the pipe fills within milliseconds), and each side's resident memory is reported after the run.
 * Run: npm run bench:node-flags   (writes bench/results/node-flags-<timestamp>.json)
 */
import { type ChildProcess, execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AnvilNode } from "../src/devnet/anvil-node.js";
import { startBenchAnvil, startGatewayProcess } from "./bench-anvil.js";
import { processCpuSeconds, round, rssMbOf, spread } from "./bench-stats.js";
import { stopProcesses } from "./bench-transfer.js";
import { writeResults } from "./callgrind-process.js";

const flags = (name: string) => (process.env[name] ?? "").split(" ").filter((f) => f !== "");
const FLAGS_A = flags("BENCH_FLAGS_A");
const FLAGS_B = flags("BENCH_FLAGS_B");
const CASES = (process.env.BENCH_CASES ?? "hit,fill,forwarded,hit").split(",");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const FILL_SECONDS = Number(process.env.BENCH_FILL_SECONDS ?? 30);
const LOG_REQUESTS = process.env.BENCH_LOG_REQUESTS === "true" ? "true" : "false";
/** `NAME=value` pairs (space-separated) over one side's environment: two configurations side by side. */
const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(
    (process.env[name] ?? "")
      .split(" ")
      .filter((pair) => pair !== "")
      .map((pair) => {
        const eq = pair.indexOf("=");
        if (eq <= 0) throw new Error(`${name}: ${pair} is not NAME=value`);
        return [pair.slice(0, eq), pair.slice(eq + 1)];
      }),
  );
const ENV_A = envOf("BENCH_ENV_A");
const ENV_B = envOf("BENCH_ENV_B");
/** Another build's `dist/main.js` for a side (this checkout's by default): two builds side by side. */
const MAIN_A = process.env.BENCH_MAIN_A;
const MAIN_B = process.env.BENCH_MAIN_B;
/** `stalled`: the gateways' output is never read after they start, as a log collector that stopped. */
const LOG_READER = process.env.BENCH_LOG_READER === "stalled" ? "stalled" : "reading";
for (const name of CASES)
  if (!["hit", "fill", "forwarded"].includes(name)) throw new Error(`BENCH_CASES: unknown case ${name}`);

const WRK = ["/usr/bin/wrk", "/usr/local/bin/wrk"].find((path) => existsSync(path));
if (WRK === undefined)
  throw new Error("wrk is not installed (apt-get install -y --no-install-recommends wrk)");

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-flags-"));
const started: ChildProcess[] = [];
let anvil: AnvilNode | undefined;

interface Side {
  name: "A" | "B";
  flags: string[];
  url: string;
  pid: number;
}

interface Measured {
  rps: number;
  cpuUsPerRequest: number;
  p99: string | undefined;
  max: string | undefined;
}

let scripts = 0;
/** A wrk script: the same call each time, or a distinct address each (from a range no earlier script used). */
function script(hashOfBlock: string | undefined): string {
  const file = join(dir, `case-${++scripts}.lua`);
  const head = 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n';
  writeFileSync(
    file,
    hashOfBlock !== undefined
      ? `${head}wrk.body = '${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByHash", params: [hashOfBlock, false] })}'\n`
      : `${head}local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  -- Scripts 2^40 addresses apart, threads 2^32 apart (below 2^53, where LuaJIT's %x is exact).
  n = ${scripts} * 1099511627776 + (tid or 0) * 4294967296
end
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, string.format('{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x%040x","latest"]}', n))
end
`,
  );
  return file;
}

/**
 * wrk run without blocking this process: its event loop keeps reading the gateways' output while wrk
 * runs. Run synchronously, nothing read a gateway's log for the whole round, so with request logging
 * on its pipe filled within milliseconds and pino held every later line in memory (tens of MB a
 * round), which the access log's cost was then measured with.
 */
const runWrk = promisify(execFile);

async function measure(side: Side, lua: string, seconds: number): Promise<Measured> {
  const before = processCpuSeconds(side.pid);
  const { stdout: out } = await runWrk(
    WRK!,
    ["-t2", "-c32", "--latency", `-d${seconds}s`, "-s", lua, side.url],
    { encoding: "utf8" },
  );
  const cpu = processCpuSeconds(side.pid) - before;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN);
  if (!(requests > 0)) throw new Error(`wrk answered no requests:\n${out}`);
  if (/Non-2xx/.test(out)) throw new Error(`chaingate answered errors:\n${out}`);
  return {
    rps: requests / seconds,
    cpuUsPerRequest: (cpu * 1e6) / requests,
    p99: /99%\s+(\S+)/.exec(out)?.[1],
    max: /Latency\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1],
  };
}

try {
  const bench = await startBenchAnvil(dir);
  anvil = bench.anvil;
  const { blockHash } = bench;
  const sides: Side[] = [];
  for (const [name, extra, env, main] of [
    ["A", FLAGS_A, ENV_A, MAIN_A],
    ["B", FLAGS_B, ENV_B, MAIN_B],
  ] as const) {
    const { child, url } = await startGatewayProcess(
      bench.anvil.url,
      join(dir, name),
      started,
      { CHAINGATE_LOG_REQUESTS: LOG_REQUESTS, ...env },
      main,
      extra,
    );
    // Its log is read to the end, as a collector would (or, BENCH_LOG_READER=stalled, no further).
    if (LOG_READER === "reading") child.stdout?.resume();
    else child.stdout?.pause();
    sides.push({ name, flags: extra, url, pid: child.pid! });
  }
  const hit = script(blockHash);
  for (const side of sides) {
    await measure(side, hit, 3);
    await measure(side, script(undefined), 3);
  }
  const results: Record<string, unknown>[] = [];
  for (const [index, name] of CASES.entries()) {
    if (name === "fill") {
      for (const side of sides) await measure(side, script(undefined), FILL_SECONDS);
      continue;
    }
    const rounds: { a: Measured; b: Measured }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      const got = new Map<string, Measured>();
      for (const side of order)
        got.set(side.name, await measure(side, name === "hit" ? hit : script(undefined), SECONDS));
      const a = got.get("A")!;
      const b = got.get("B")!;
      rounds.push({ a, b });
      console.log(
        `${name} round ${r + 1}: A ${Math.round(a.rps)}/s ${a.cpuUsPerRequest.toFixed(1)} µs (p99 ${a.p99}, max ${a.max})  B ${Math.round(b.rps)}/s ${b.cpuUsPerRequest.toFixed(1)} µs (p99 ${b.p99}, max ${b.max})  B/A ${(b.rps / a.rps).toFixed(3)}`,
      );
    }
    const after = CASES.slice(0, index).includes("fill") ? " after fill" : "";
    const result = {
      case: `${name}${after}`,
      rounds: ROUNDS,
      rate_b_vs_a: spread(rounds.map(({ a, b }) => b.rps / a.rps)),
      cpu_b_vs_a: spread(rounds.map(({ a, b }) => b.cpuUsPerRequest / a.cpuUsPerRequest)),
      a_cpu_us_per_request: spread(rounds.map(({ a }) => a.cpuUsPerRequest)),
      b_cpu_us_per_request: spread(rounds.map(({ b }) => b.cpuUsPerRequest)),
      per_round: rounds.map(({ a, b }) => ({
        a: { rps: round(a.rps, 0), cpu_us: round(a.cpuUsPerRequest, 1), p99: a.p99, max: a.max },
        b: { rps: round(b.rps, 0), cpu_us: round(b.cpuUsPerRequest, 1), p99: b.p99, max: b.max },
      })),
    };
    console.log(result.case, "B/A rate", result.rate_b_vs_a, "CPU", result.cpu_b_vs_a);
    results.push(result);
  }
  writeResults("node-flags", {
    when: new Date().toISOString(),
    flags_a: FLAGS_A.join(" "),
    flags_b: FLAGS_B.join(" "),
    env_a: ENV_A,
    env_b: ENV_B,
    main_a: MAIN_A ?? "dist/main.js",
    main_b: MAIN_B ?? "dist/main.js",
    log_requests: LOG_REQUESTS,
    log_reader: LOG_READER,
    rss_mb_after: Object.fromEntries(sides.map((side) => [side.name, rssMbOf(side.pid)])),
    seconds_per_round: SECONDS,
    results,
  });
} finally {
  // A gateway whose output was left unread would drop its last lines and wait 2 s before it exits
  // (decision 241): read it now, so it stops at once.
  for (const child of started) child.stdout?.resume();
  await stopProcesses(started);
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
}
