/** A Node program run under callgrind and its requests counted in windows: what the instruction benches share (decision 195). */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "undici";
import { startFlags } from "./bench-anvil.js";

const ROOT = new URL("..", import.meta.url).pathname;

/** Every program started under callgrind, for the bench's clean-up. */
const started: ChildProcess[] = [];

/** Kills every program started under callgrind that is still running. */
function killCounted(): void {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
}

/** Extra Node flags from an environment variable (e.g. "--perf-basic-prof", which names JIT code in the dumps). */
export const nodeArgsOf = (name: string) => (process.env[name] ?? "").split(" ").filter((a) => a !== "");

export interface Counted {
  pid: number;
  url: string;
  out: string;
  child: ChildProcess;
}

/**
 * `args` (a Node program) under callgrind, instrumentation off until the first window, with no
 * compiler or collector threads (their work would fall into a window at random times); answers
 * once its output matches `ready`, whose first group is its URL. Its dumps go under `dir`/`name`.
 */
export async function startCounted(
  dir: string,
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
  started.push(child);
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
  return { pid: child.pid!, url, out, child };
}

/**
 * chaingate of `main` under callgrind with `npm start`'s defaults in front of `upstream` (chain
 * 1001, finality one block), its background passes (tracker, relayer, webhook sender, balance
 * check, head poll) at their longest intervals so that a window holds requests and little else;
 * `env` over those. BENCH_GATEWAY_NODE_ARGS: extra Node flags for chaingate only.
 */
export function startCountedChaingate(
  dir: string,
  main: string,
  name: string,
  upstream: string,
  env: Record<string, string> = {},
): Promise<Counted> {
  const data = join(dir, name);
  mkdirSync(data, { recursive: true });
  const config = join(data, "bench-chain.json");
  writeFileSync(
    config,
    JSON.stringify({ chains: [{ chainId: 1001, upstreams: [{ url: upstream }], finality: 1 }] }),
  );
  return startCounted(
    dir,
    name,
    [...nodeArgsOf("BENCH_GATEWAY_NODE_ARGS"), main],
    {
      PORT: "0",
      LOG_LEVEL: "info",
      CHAINGATE_DATA_DIR: data,
      CHAINGATE_CONFIG: config,
      CHAINGATE_TRACKER_INTERVAL_MS: "600000",
      CHAINGATE_RELAYER_INTERVAL_MS: "600000",
      CHAINGATE_WEBHOOK_INTERVAL_MS: "60000",
      CHAINGATE_BALANCE_CHECK_MS: "3600000",
      CHAINGATE_HEAD_POLL_MS: "60000",
      ...env,
    },
    /"url":"(http:\/\/[^"]+)".*"msg":"chaingate ready"/,
  );
}

/** A baseline program (`node --input-type=module -e source`) under callgrind; it prints its URL first. BENCH_BASELINE_NODE_ARGS: its extra Node flags. */
export function startCountedBaseline(
  dir: string,
  name: string,
  source: string,
  args: string[],
): Promise<Counted> {
  return startCounted(
    dir,
    name,
    [...nodeArgsOf("BENCH_BASELINE_NODE_ARGS"), "--input-type=module", "-e", source, ...args],
    {},
    /^(http:\/\/\S+)/,
  );
}

/** One kind of request: its path, the body of the n-th, and a text every good answer holds. */
export interface Case {
  name: string;
  path: string;
  body: (n: number) => string;
  answerHolds: string;
}

async function send(pool: Pool, item: Case, n: number): Promise<void> {
  const answer = await pool.request({
    path: item.path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: item.body(n),
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200 || !text.includes(item.answerHolds))
    throw new Error(`${item.path} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
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
  // Seen once, with two of these benches running at once: a dump whose parts exceed its total.
  if (window.collector + window.compiler >= window.total)
    throw new Error(
      `a window's collector and compilers (${window.collector + window.compiler}) exceed its total (${window.total})`,
    );
  return window;
}

export interface Measured {
  name: string;
  /** Each window's instructions a request, less the collector's and the compilers'. */
  perRequest: number[];
  /** The collector's instructions a request over all windows (its work comes in lumps). */
  collectorPerRequest: number;
  /** All instructions a request over all windows, collector and compilers included. */
  totalPerRequest: number;
  /**
   * Milliseconds of wall time a request took under callgrind, by window: work done on timers (a
   * heartbeat, a key-ring refresh, a head read after sends) is counted in proportion to it, so two
   * builds compare fairly only where these are alike.
   */
  msPerRequest: number[];
}

/** How many requests: a warm-up per case so the JIT has settled, then `windows` windows of `requests`, over `connections`. */
export interface Counting {
  warmup: number;
  windows: number;
  requests: number;
  connections: number;
}

/** BENCH_WARMUP, BENCH_WINDOWS, BENCH_REQUESTS and BENCH_CONNECTIONS over a bench's own defaults. */
export function countingFromEnv(defaults: Counting): Counting {
  const read = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  return {
    warmup: read("BENCH_WARMUP", defaults.warmup),
    windows: read("BENCH_WINDOWS", defaults.windows),
    requests: read("BENCH_REQUESTS", defaults.requests),
    connections: read("BENCH_CONNECTIONS", defaults.connections),
  };
}

/** A bench's end: whatever still runs under callgrind killed, its node stopped, its folder removed (kept with BENCH_KEEP=1). */
export async function endCounting(dir: string, stopNode: () => Promise<void>): Promise<void> {
  killCounted();
  await stopNode();
  if (process.env.BENCH_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}

/** `count` requests of a case over the connections, each sending its next once answered. */
async function sendMany(pool: Pool, item: Case, count: number, connections: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await send(pool, item, next++);
  };
  await Promise.all(Array.from({ length: connections }, worker));
}

/**
 * Each case's windows, counted between `callgrind_control --zero` and `--dump`, each less the
 * collector's and the compilers' functions (by name: a major collection or a late optimisation
 * falls into one window and not the next); then ends the program.
 */
export async function measure(
  counted: Counted,
  name: string,
  cases: Case[],
  counting: Counting,
): Promise<Measured[]> {
  const { warmup, windows: windowCount, requests, connections } = counting;
  const pool = new Pool(counted.url, { connections });
  const results: Measured[] = [];
  execFileSync("callgrind_control", ["--instr=on", String(counted.pid)], { stdio: "ignore" });
  for (const item of cases) {
    await sendMany(pool, item, warmup, connections);
    const windows: Window[] = [];
    const ms: number[] = [];
    for (let w = 0; w < windowCount; w++) {
      execFileSync("callgrind_control", ["--zero", String(counted.pid)], { stdio: "ignore" });
      const started = performance.now();
      await sendMany(pool, item, requests, connections);
      ms.push(Number(((performance.now() - started) / requests).toFixed(1)));
      windows.push(dumpedWindow(counted));
    }
    const sum = (pick: (w: Window) => number) => windows.reduce((all, w) => all + pick(w), 0);
    const measured = {
      name: item.name,
      perRequest: windows.map((w) => Math.round((w.total - w.collector - w.compiler) / requests)),
      collectorPerRequest: Math.round(sum((w) => w.collector) / (requests * windowCount)),
      totalPerRequest: Math.round(sum((w) => w.total) / (requests * windowCount)),
      msPerRequest: ms,
    };
    console.log(
      `${name}: ${item.name}: ${measured.perRequest.join(", ")} instructions a request less the collector's and the compilers' (collector ${measured.collectorPerRequest}, all ${measured.totalPerRequest}; ms a request ${ms.join(", ")})`,
    );
    results.push(measured);
  }
  await pool.close();
  process.kill(counted.pid, "SIGTERM");
  await new Promise((resolve) => counted.child.once("exit", resolve));
  return results;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A ratio as the rate benches give it: the baseline's instructions over the subject's (above 1: the subject costs less). */
export const speed = (baseline: Measured, subject: Measured) =>
  Number((median(baseline.perRequest) / median(subject.perRequest)).toFixed(3));

/** One row of a result table. */
export const tableRow = (subject: string, m: Measured) => ({
  subject,
  case: m.name,
  windows: m.perRequest.join(" "),
  median: median(m.perRequest),
  collector: m.collectorPerRequest,
  all: m.totalPerRequest,
  "ms a request": median(m.msPerRequest),
});

/** Writes a bench's results to bench/results/<prefix>-<timestamp>.json and says where. */
export function writeResults(prefix: string, results: unknown): void {
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  const file = join(ROOT, `bench/results/${prefix}-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written to ${file}`);
}
