/**
 * Instructions a read costs chaingate, counted by callgrind: a measure that does not move with the
 * machine's load, for changes of a few percent that wall-clock rounds on a shared machine cannot
 * show (decision 195).
 * - chaingate (dist/main.js, `npm start`'s flags and defaults: the access log on), the constant-reply
 *   Fastify ceiling and the minimal undici forwarder (bench/baselines.ts) each run under
 *   `valgrind --tool=callgrind --instr-atstart=no` with `--single-threaded` (no compiler or
 *   collector threads); chaingate's background passes (tracker, relayer, webhook sender, balance
 *   check, head poll) at their longest intervals, so that a counted window holds requests and
 *   little else;
 * - BENCH_CONNECTIONS (1) connections (one: requests one after another, the same order every run),
 *   a warm-up of BENCH_WARMUP (10,000) requests of each case so the JIT has settled, then
 *   BENCH_WINDOWS (5) windows of BENCH_REQUESTS (600) each, counted between `callgrind_control
 *   --zero` and `--dump`; each window less the collector's and the compilers' functions (by name:
 *   a major collection or a late optimisation falls into one window and not the next), the median
 *   over windows the figure, the collector's share reported apart over all windows;
 * - cases: a cache hit on `POST /`, the same hit on its Native path (`POST /eth_getBlockByHash`), and
 *   a forwarded read (`eth_getBalance` of a distinct address each: neither cache nor coalescing
 *   answers it; anvil's own work is not counted, it runs outside valgrind); BENCH_CASES=hits or
 *   =forwarded narrows them, BENCH_BASELINES=false leaves out the ceiling and the forwarder;
 * - BENCH_VERSUS=<dir>: another checkout's build (its `dist/main.js`) measured the same way after
 *   this one, and each case's ratio;
 * - BENCH_KEEP=1 keeps the dumps (with BENCH_GATEWAY_NODE_ARGS / BENCH_BASELINE_NODE_ARGS
 *   "--perf-basic-prof", /tmp/perf-<pid>.map names the JIT code in them).
 * Run: npm run bench:read-instructions   (valgrind is on every machine of this kind; writes bench/results/read-instructions-<timestamp>.json)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { CEILING, FORWARDER } from "./baselines.js";
import { startBenchAnvil } from "./bench-anvil.js";

const WARMUP = Number(process.env.BENCH_WARMUP ?? 10_000);
const WINDOWS = Number(process.env.BENCH_WINDOWS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 600);
const VERSUS = process.env.BENCH_VERSUS;
/** Connections sending at once (1: requests one after another, the same order every run). */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
/** BENCH_BASELINES=false: chaingate alone (a profile, or two builds), without the ceiling and the forwarder. */
const BASELINES = process.env.BENCH_BASELINES !== "false";
const ROOT = new URL("..", import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-instr-"));
const { anvil, blockHash } = await startBenchAnvil(dir);
const children: ChildProcess[] = [];

/** `npm start`'s Node flags (the memory bounds), read off package.json as the other benches do. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  return /^(?:exec\s+)?node\s+(.*?)\s*dist\/main\.js$/.exec(pkg.scripts.start)?.[1]?.split(/\s+/) ?? [];
}

interface Counted {
  pid: number;
  url: string;
  out: string;
}

/**
 * `args` (a Node program) under callgrind, instrumentation off until the first window, with no
 * compiler or collector threads (their work would fall into a window at random times); answers
 * once its output matches `ready`, whose first group is its URL.
 */
async function startCounted(
  name: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<Counted> {
  const out = join(dir, name, "callgrind");
  mkdirSync(out, { recursive: true });
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      `--callgrind-out-file=${join(out, "cg.%p")}`,
      process.execPath,
      ...startFlags(),
      "--single-threaded",
      ...args,
    ],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    // Read to the end (a full pipe would stall it), kept only until the ready line.
    let text: string | undefined = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      if (text === undefined) return;
      text += chunk.toString();
      const match = ready.exec(text);
      if (match !== null) {
        resolve(match[1]!);
        text = undefined;
      }
    });
    child.stderr!.resume();
    child.once("exit", (code) => reject(new Error(`${name} under callgrind exited with ${code}`)));
  });
  return { pid: child.pid!, url, out };
}

/**
 * chaingate of `main` with `npm start`'s defaults, its background passes (tracker, relayer, webhook
 * sender, balance check, head poll) at their longest intervals.
 */
function startChaingate(main: string, name: string): Promise<Counted> {
  const data = join(dir, name);
  mkdirSync(data, { recursive: true });
  const config = join(data, "bench-chain.json");
  writeFileSync(
    config,
    JSON.stringify({ chains: [{ chainId: 1001, upstreams: [{ url: anvil.url }], finality: 1 }] }),
  );
  const env = {
    PORT: "0",
    LOG_LEVEL: "info",
    CHAINGATE_DATA_DIR: data,
    CHAINGATE_CONFIG: config,
    CHAINGATE_TRACKER_INTERVAL_MS: "600000",
    CHAINGATE_RELAYER_INTERVAL_MS: "600000",
    CHAINGATE_WEBHOOK_INTERVAL_MS: "60000",
    CHAINGATE_BALANCE_CHECK_MS: "3600000",
    CHAINGATE_HEAD_POLL_MS: "60000",
  };
  // BENCH_GATEWAY_NODE_ARGS: extra Node flags for chaingate only, as in the other benches (e.g.
  // "--perf-basic-prof" to name its JIT code in callgrind's dumps with BENCH_KEEP=1).
  const extra = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  return startCounted(name, [...extra, main], env, /"url":"(http:\/\/[^"]+)".*"msg":"chaingate ready"/);
}

/** A baseline program of baselines.ts with its arguments. */
function startBaseline(name: string, source: string, args: string[]): Promise<Counted> {
  // BENCH_BASELINE_NODE_ARGS: extra Node flags for the baselines, as BENCH_GATEWAY_NODE_ARGS for chaingate.
  const extra = (process.env.BENCH_BASELINE_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  return startCounted(name, [...extra, "--input-type=module", "-e", source, ...args], {}, /^(http:\/\/\S+)/);
}

interface Case {
  name: string;
  path: string;
  body: (n: number) => string;
}

let distinct = 0x10_0000;
const HIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "eth_getBlockByHash",
  params: [blockHash, false],
});
const forwarded: Case = {
  name: "forwarded read",
  path: "/",
  body: () =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBalance",
      params: [`0x${(distinct++).toString(16).padStart(40, "0")}`, "latest"],
    }),
};
/** BENCH_CASES=hits: the two cache hits only (a forwarded read waits on anvil, the longest case); =forwarded: that one only. */
const ONLY_HITS = process.env.BENCH_CASES === "hits";
const ONLY_FORWARDED = process.env.BENCH_CASES === "forwarded";
const CASES: Case[] = [
  ...(ONLY_FORWARDED
    ? []
    : [
        { name: "hit on POST /", path: "/", body: () => HIT },
        { name: "hit on a Native path", path: "/eth_getBlockByHash", body: () => HIT },
      ]),
  ...(ONLY_HITS ? [] : [forwarded]),
];

async function send(pool: Pool, path: string, body: string): Promise<void> {
  const answer = await pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200 || !text.includes('"result"'))
    throw new Error(`${path} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
}

/** `count` requests of a case over CONNECTIONS connections, each sending its next once answered. */
async function sendMany(pool: Pool, item: Case, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await send(pool, item.path, item.body(next++));
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

/** V8's garbage collector, by the names of its functions (a window holds a major collection or not). */
const COLLECTOR =
  /v8::internal::(?!compiler::|maglev::|interpreter::)\S*(?:Scaveng|MarkCompact|Marking|Marker|Sweep|Evacuat|Compaction|RememberedSet|SlotSet|Heap::|GCTracer|Worklist|LargeObjectSpace|PagedSpace|NewSpace|SemiSpace|MemoryChunk|MemoryAllocator|GlobalHandles|Visitor|BodyDescriptor|FreeList|Page::|ArrayBufferSweeper|Ephemeron|WeakObjects|MinorGC|RelocIterator|TableCleaner|SizeFromMap|UsedInstanceSize|Flush|LiveObject|MarkBit|::Age\(|MakeOlder|GetHeaderSize)|heap::base::|cppgc::/;
/** V8's compilers: a function optimised (or deoptimised) within a window, a cost of warming up. */
const COMPILER =
  /v8::internal::(?:compiler::|maglev::|baseline::|interpreter::|Compiler::|OptimizingCompileDispatcher|Deoptimizer|Zone|Parser|Scanner|AstNode|Scope::)/;

/** One window's instructions: all of them, the collector's and the compilers'. */
interface Window {
  total: number;
  collector: number;
  compiler: number;
}

/** The window since the last zero, from the dump callgrind writes, split by callgrind_annotate. */
function dumpedWindow(counted: Counted): Window {
  execFileSync("callgrind_control", ["--dump", String(counted.pid)], { stdio: "ignore" });
  const files = readdirSync(counted.out)
    .filter((f) => f.startsWith(`cg.${counted.pid}.`))
    .sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  const annotated = execFileSync(
    "callgrind_annotate",
    ["--inclusive=no", "--threshold=100", join(counted.out, files.at(-1)!)],
    { maxBuffer: 256 * 1024 * 1024 },
  ).toString();
  const window: Window = { total: 0, collector: 0, compiler: 0 };
  for (const line of annotated.split("\n")) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const count = Number(match[1]!.replaceAll(",", ""));
    const fn = match[2]!;
    if (fn.includes("PROGRAM TOTALS")) window.total = count;
    else if (COMPILER.test(fn)) window.compiler += count;
    else if (COLLECTOR.test(fn)) window.collector += count;
  }
  if (window.total === 0) throw new Error("callgrind_annotate gave no totals");
  return window;
}

interface Measured {
  name: string;
  /** Each window's instructions a request, less the collector's and the compilers'. */
  perRequest: number[];
  /** The collector's instructions a request over all windows (its work comes in lumps). */
  collectorPerRequest: number;
  /** All instructions a request over all windows, collector and compilers included. */
  totalPerRequest: number;
}

async function measure(counted: Counted, name: string, cases: Case[]): Promise<Measured[]> {
  const pool = new Pool(counted.url, { connections: CONNECTIONS });
  const results: Measured[] = [];
  execFileSync("callgrind_control", ["--instr=on", String(counted.pid)], { stdio: "ignore" });
  for (const item of cases) {
    await sendMany(pool, item, WARMUP);
    const windows: Window[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      execFileSync("callgrind_control", ["--zero", String(counted.pid)], { stdio: "ignore" });
      await sendMany(pool, item, REQUESTS);
      windows.push(dumpedWindow(counted));
    }
    const sum = (pick: (w: Window) => number) => windows.reduce((all, w) => all + pick(w), 0);
    const measured = {
      name: item.name,
      perRequest: windows.map((w) => Math.round((w.total - w.collector - w.compiler) / REQUESTS)),
      collectorPerRequest: Math.round(sum((w) => w.collector) / (REQUESTS * WINDOWS)),
      totalPerRequest: Math.round(sum((w) => w.total) / (REQUESTS * WINDOWS)),
    };
    console.log(
      `${name}: ${item.name}: ${measured.perRequest.join(", ")} instructions a request less the collector's and the compilers' (collector ${measured.collectorPerRequest}, all ${measured.totalPerRequest})`,
    );
    results.push(measured);
  }
  await pool.close();
  process.kill(counted.pid, "SIGTERM");
  await new Promise((resolve) => children.find((c) => c.pid === counted.pid)!.once("exit", resolve));
  return results;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A ratio as the rate benches give it: the baseline's instructions over the subject's (above 1: the subject costs less). */
const speed = (baseline: Measured, subject: Measured) =>
  Number((median(baseline.perRequest) / median(subject.perRequest)).toFixed(3));

try {
  const hitAnswer = await (
    await fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body: HIT })
  ).text();
  const ceiling =
    BASELINES && !ONLY_FORWARDED
      ? (
          await measure(await startBaseline("ceiling", CEILING, [hitAnswer]), "ceiling", [
            { name: "constant reply", path: "/", body: () => HIT },
          ])
        )[0]
      : undefined;
  const forwarder = BASELINES
    ? ONLY_HITS
      ? undefined
      : (await measure(await startBaseline("forwarder", FORWARDER, [anvil.url]), "forwarder", [forwarded]))[0]
    : undefined;
  const mine = await measure(await startChaingate(join(ROOT, "dist/main.js"), "this"), "this", CASES);
  const other =
    VERSUS === undefined
      ? undefined
      : await measure(await startChaingate(join(VERSUS, "dist/main.js"), "versus"), "versus", CASES);
  const row = (subject: string, m: Measured) => ({
    subject,
    case: m.name,
    windows: m.perRequest.join(" "),
    median: median(m.perRequest),
    collector: m.collectorPerRequest,
    all: m.totalPerRequest,
  });
  console.table([
    ...(ceiling === undefined ? [] : [row("ceiling", ceiling)]),
    ...(forwarder === undefined ? [] : [row("forwarder", forwarder)]),
    ...mine.map((m) => row("this build", m)),
    ...(other ?? []).map((m) => row("versus", m)),
  ]);
  const find = (name: string) => mine.find((m) => m.name === name);
  const hit = find("hit on POST /");
  const nativeHit = find("hit on a Native path");
  const forwardedRead = find("forwarded read");
  const ratios = {
    ...(ceiling === undefined || hit === undefined || nativeHit === undefined
      ? {}
      : { hit_vs_ceiling: speed(ceiling, hit), native_hit_vs_ceiling: speed(ceiling, nativeHit) }),
    ...(forwarder === undefined || forwardedRead === undefined
      ? {}
      : { forwarded_vs_forwarder: speed(forwarder, forwardedRead) }),
    ...(other === undefined
      ? {}
      : Object.fromEntries(mine.map((m, i) => [`${m.name}: this build vs versus`, speed(other[i]!, m)]))),
  };
  console.log(ratios);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  const file = join(
    ROOT,
    `bench/results/read-instructions-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
  );
  writeFileSync(
    file,
    `${JSON.stringify({ warmup: WARMUP, windows: WINDOWS, requests: REQUESTS, versus: VERSUS ?? null, ceiling: ceiling ?? null, forwarder: forwarder ?? null, mine, other: other ?? null, ratios }, null, 2)}\n`,
  );
  console.log(`written to ${file}`);
} finally {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await anvil.stop();
  if (process.env.BENCH_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}
