/**
 * The gateway measured with wrk (an out-of-process load generator in C, cheaper per request than
 * autocannon), every process in its own: the #17 targets as ratios in one run.
 * - cache hits: chaingate vs a Fastify handler answering the same bytes as a constant (the Node
 *   ceiling), and behind a node
 *   5 ms away vs that node's own rate;
 * - forwarded calls with a distinct address each (neither cache nor coalescing can answer): chaingate
 *   vs a minimal Node forwarder in front of the same anvil, and the p50 latency chaingate adds at
 *   1 connection over anvil direct;
 * - CPU milliseconds per request of each process, read from /proc;
 * - forwarded calls through chaingate with two upstreams (the same anvil by two names) against one:
 *   what hedging's bookkeeping costs reads that need no hedge;
 * - chaingate's peak RSS over those cases, and apart from it its peak over BENCH_FULL_SECONDS (40)
 *   more of distinct reads, long enough to fill the response cache;
 * - the default configuration (every request in the access log) beside the fastest documented one
 *   (`--log-requests false`, which the cases above use): cache hits and forwarded reads, taken in
 *   turn, BENCH_ROUNDS (2) rounds each, the #35 target (>= 0.9) on the sums;
 * - the #42 read targets again over BENCH_RATIO_ROUNDS (4) alternating rounds at 32 connections
 *   (ceiling, hit, Native hit; forwarder, forwarded read; the order reversed every other round):
 *   each ratio's min / median / max over rounds, and each process's CPU a request split into user
 *   and system time (the socket writes are system time, the same for any server).
 * Run: npm run bench:gateway-wrk   (installs Debian's wrk when missing; writes bench/results/gateway-wrk-<timestamp>.json)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anvilsFor } from "../src/test-support/cli.js";
import { CEILING, FORWARDER } from "./baselines.js";
import { DEV, startBenchAnvil, startGatewayProcess } from "./bench-anvil.js";
import { rssMbOf } from "./bench-stats.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** The last phase's length: long enough for distinct reads to fill the default 32 MiB response cache. */
const FULL_SECONDS = Number(process.env.BENCH_FULL_SECONDS ?? 40);
/** Alternations of the default and the tuned configuration (the machine's speed drifts between runs). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** Alternating rounds of the #42 read ratios (each ratio's spread over rounds, not one run's). */
const RATIO_ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 4);
/** BENCH_CASES=config: only the default-vs-tuned comparison (a quick check of the #35 target). */
const ONLY_CONFIG = process.env.BENCH_CASES === "config";
const TICKS = 100; // clock ticks per second in /proc/<pid>/stat (USER_HZ on Linux)

function ensureWrk(): string {
  for (const path of ["/usr/bin/wrk", "/usr/local/bin/wrk"]) if (existsSync(path)) return path;
  console.log("installing Debian's wrk ...");
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "wrk"], { stdio: "inherit" });
  return "/usr/bin/wrk";
}
const WRK = ensureWrk();

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-wrk-"));
const { anvil, blockHash } = await startBenchAnvil(dir);

/** A node `delayMs` away: each request waits that long, then goes to anvil (run in a process of its own). */
const DELAY_PROXY = `
  import { Agent, createServer, request } from "node:http";
  const [target, delay] = [new URL(process.argv[1]), Number(process.argv[2])];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c)).on("end", () => setTimeout(() => {
      const out = request({ host: target.hostname, port: target.port, path: "/", method: "POST",
        headers: { "content-type": "application/json" }, agent: keep }, (answer) => {
        res.writeHead(answer.statusCode, { "content-type": "application/json" }); answer.pipe(res); });
      out.end(Buffer.concat(chunks));
    }, delay));
  });
  const keep = new Agent({ keepAlive: true, maxSockets: 64 });
  server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port));
`;

const children: ChildProcess[] = [];

function spawnScript(source: string, args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", source, ...args], {
    cwd: new URL("..", import.meta.url).pathname,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", (chunk: Buffer) => resolve({ child, url: chunk.toString().trim() }));
    child.once("exit", (code) => reject(new Error(`helper exited with ${code}`)));
  });
}

/** A process's CPU so far in clock ticks: user and system time. */
function cpuTicksOf(pid: number): { user: number; system: number } {
  // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]), system: Number(fields[12]) };
}

let scripts = 0;

/**
 * A wrk Lua script: POST a JSON-RPC call, the same each time or with a distinct address each time.
 * A distinct script must be made afresh for every run: each file starts at an address no earlier
 * run asked, and each wrk thread counts in a range of its own (LuaJIT's math.random is the same
 * sequence in every thread and every run, and an address asked before may be answered from cache
 * or coalesced with another thread's).
 */
function script(method: string, params: unknown[], distinct: boolean): string {
  const file = join(dir, `${method}-${distinct ? "d" : "s"}-${params.length}-${++scripts}.lua`);
  const fixed = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  const rest = JSON.stringify(params.slice(1)).slice(1, -1);
  writeFileSync(
    file,
    distinct
      ? `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  -- Runs 2^40 addresses apart, threads 2^32 apart: below 2^53, where LuaJIT's %x is exact.
  n = ${scripts} * 1099511627776 + (tid or 0) * 4294967296
end
request = function()
  n = n + 1
  local body = string.format('{"jsonrpc":"2.0","id":1,"method":"${method}","params":["0x%040x",${rest}]}', n)
  return wrk.format(nil, nil, nil, body)
end
`
      : `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '${fixed}'
`,
  );
  return file;
}

interface Case {
  name: string;
  target: string;
  url: string;
  connections: number;
  rps: number;
  p50_ms: number;
  errors: number;
  cpu_ms_per_request: Record<string, number>;
  /** The user-time part of cpu_ms_per_request (the rest is system time). */
  user_ms_per_request: Record<string, number>;
}

async function run(
  name: string,
  target: string,
  url: string,
  lua: string,
  connections: number,
  watched: Record<string, number>,
  seconds = SECONDS,
): Promise<Case> {
  const before = Object.fromEntries(Object.entries(watched).map(([k, pid]) => [k, cpuTicksOf(pid)]));
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(WRK, [
      "-t",
      connections === 1 ? "1" : "2",
      "-c",
      String(connections),
      "-d",
      `${seconds}s`,
      "--latency",
      "-s",
      lua,
      url,
    ]);
    let text = "";
    child.stdout.on("data", (c: Buffer) => {
      text += c.toString();
    });
    child.once("exit", (code) =>
      code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`)),
    );
  });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const p50Text = /\s50%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p50 = p50Text
    ? Number(p50Text[1]) * (p50Text[2] === "us" ? 0.001 : p50Text[2] === "s" ? 1000 : 1)
    : Number.NaN;
  const errors =
    Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) +
    Number(/Socket errors:.*?timeout (\d+)/.exec(out)?.[1] ?? 0);
  const perRequest = (ticks: number) =>
    Math.round(((ticks * 1000) / TICKS / Math.max(1, total)) * 10000) / 10000;
  const after = Object.fromEntries(Object.entries(watched).map(([k, pid]) => [k, cpuTicksOf(pid)]));
  const cpu = Object.fromEntries(
    Object.keys(watched).map((k) => [
      k,
      perRequest(after[k]!.user + after[k]!.system - before[k]!.user - before[k]!.system),
    ]),
  );
  const user = Object.fromEntries(
    Object.keys(watched).map((k) => [k, perRequest(after[k]!.user - before[k]!.user)]),
  );
  return {
    name,
    target,
    url,
    connections,
    rps: Math.round(rps),
    p50_ms: Math.round(p50 * 1000) / 1000,
    errors,
    cpu_ms_per_request: cpu,
    user_ms_per_request: user,
  };
}

const results: Case[] = [];
let peakRss = 0;
let peakRssCacheFull = 0;
let cacheEntries = Number.NaN;
try {
  const forwarder = await spawnScript(FORWARDER, [anvil.url]);
  const far = await spawnScript(DELAY_PROXY, [anvil.url, "5"]);
  const near = await spawnScript(DELAY_PROXY, [anvil.url, "1"]);
  const gateway = await startGatewayProcess(anvil.url, join(dir, "direct"), children);
  const gatewayFar = await startGatewayProcess(far.url, join(dir, "far"), children);
  const gatewayNear = await startGatewayProcess(near.url, join(dir, "near"), children);
  // The configuration `npm start` gives (requests logged), and beside it a tuned one with the same
  // history (the response cache's fill changes a distinct read's cost).
  const gatewayDefault = await startGatewayProcess(anvil.url, join(dir, "default"), children, {
    CHAINGATE_LOG_REQUESTS: "true",
  });
  const gatewayTuned = await startGatewayProcess(anvil.url, join(dir, "tuned"), children);
  // Two upstreams of the chain (the same anvil by two names): every read is hedgeable, so what the
  // hedging machinery costs a read that needs no hedge shows beside the one-upstream case.
  const twoDir = join(dir, "two");
  mkdirSync(twoDir, { recursive: true });
  writeFileSync(
    join(twoDir, "two-upstreams.json"),
    JSON.stringify({
      chains: [
        {
          chainId: 1001,
          finality: 1,
          upstreams: [{ url: anvil.url }, { url: anvil.url.replace("127.0.0.1", "localhost") }],
        },
      ],
    }),
  );
  const gatewayTwo = await startGatewayProcess(anvil.url, twoDir, children, {
    CHAINGATE_CONFIG: join(twoDir, "two-upstreams.json"),
  });
  // A constant reply is only a ceiling for an answer of the same size (a block is ~1.5 KB).
  const cachedAnswer = await (
    await fetch(gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_getBlockByHash",
        params: [blockHash, false],
      }),
    })
  ).text();
  const ceiling = await spawnScript(CEILING, [cachedAnswer]);
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMbOf(gateway.child.pid!));
  }, 100);
  // The anvil process itself (not the shell guard that stops it with us).
  const anvilPid = anvilsFor(dir)[0]!;
  const pids = {
    chaingate: gateway.child.pid!,
    anvil: anvilPid,
    forwarder: forwarder.child.pid!,
    ceiling: ceiling.child.pid!,
  };

  const hit = script("eth_getBlockByHash", [blockHash, false], false);
  // Made afresh per run (see script).
  const distinct = () => script("eth_getBalance", [DEV, "latest"], true);
  const constant = script("constant", [], false);
  // Warm the caches and the JITs.
  await run("warm-up", "chaingate", gateway.url, hit, 8, pids);
  for (const c of ONLY_CONFIG ? [] : [1, 32]) {
    results.push(await run("constant reply", "ceiling", ceiling.url, constant, c, pids));
    results.push(await run("cache hit", "chaingate", gateway.url, hit, c, pids));
    // The same call on its Native path (the body's method is ignored there): the read fast path too.
    results.push(
      await run("cache hit, Native path", "chaingate", `${gateway.url}/eth_getBlockByHash`, hit, c, pids),
    );
    results.push(await run("forwarded, distinct", "anvil", anvil.url, distinct(), c, pids));
    results.push(await run("forwarded, distinct", "forwarder", forwarder.url, distinct(), c, pids));
    results.push(await run("forwarded, distinct", "chaingate", gateway.url, distinct(), c, pids));
    if (c === 32) {
      const two = { ...pids, chaingate: gatewayTwo.child.pid! };
      await run("warm-up", "chaingate", gatewayTwo.url, distinct(), c, two);
      results.push(
        await run("forwarded, distinct, two upstreams", "chaingate", gatewayTwo.url, distinct(), c, two),
      );
    }
  }
  for (const [label, node, gw] of ONLY_CONFIG
    ? []
    : ([
        ["1 ms", near, gatewayNear],
        ["5 ms", far, gatewayFar],
      ] as const)) {
    // This case's own chaingate, and the proxy that plays the distant node.
    const these = { chaingate: gw.child.pid!, anvil: anvilPid, forwarder: node.child.pid! };
    await run("warm-up", "chaingate", gw.url, hit, 8, these);
    results.push(await run(`node ${label} away`, "node", node.url, hit, 32, these));
    results.push(await run(`cache hit, node ${label} away`, "chaingate", gw.url, hit, 32, these));
  }
  // The peak RSS above is the cases' own (#17); the rounds below add distinct reads to the cache.
  clearInterval(sampler);
  // The #42 ratios over alternating rounds: one run of each says little on a shared machine.
  const hits = [
    ["round: constant reply", "ceiling", ceiling.url, constant],
    ["round: cache hit", "chaingate", gateway.url, hit],
    ["round: cache hit, Native path", "chaingate", `${gateway.url}/eth_getBlockByHash`, hit],
  ] as const;
  const forwarded = [
    ["round: forwarded, distinct", "forwarder", forwarder.url],
    ["round: forwarded, distinct", "chaingate", gateway.url],
  ] as const;
  for (let round = 0; round < (ONLY_CONFIG ? 0 : RATIO_ROUNDS); round++) {
    for (const [name, target, url, lua] of round % 2 === 0 ? hits : [...hits].reverse())
      results.push(await run(name, target, url, lua, 32, pids));
    for (const [name, target, url] of round % 2 === 0 ? forwarded : [...forwarded].reverse())
      results.push(await run(name, target, url, distinct(), 32, pids));
  }
  // Default vs tuned, in turn (ABBA: a drift of the machine's speed falls on both alike): the same
  // cases, the same client, the same anvil.
  const both = { default: gatewayDefault.child.pid!, tuned: gatewayTuned.child.pid!, anvil: anvilPid };
  // Both cases warmed on both (a cold first case cost the one measured first 30%).
  for (const [target, gw] of [
    ["default", gatewayDefault],
    ["tuned", gatewayTuned],
  ] as const) {
    await run("warm-up", target, gw.url, hit, 32, both);
    await run("warm-up", target, gw.url, distinct(), 32, both);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const pair = [
      ["default", gatewayDefault],
      ["tuned", gatewayTuned],
    ] as const;
    for (const [target, gw] of round % 2 === 0 ? pair : [...pair].reverse()) {
      results.push(await run("config: cache hit", target, gw.url, hit, 32, both));
      results.push(await run("config: forwarded, distinct", target, gw.url, distinct(), 32, both));
    }
  }
  if (!ONLY_CONFIG) {
    // Memory once the response cache is full: the cases above are too short to fill it. Distinct
    // reads for FULL_SECONDS, the peak RSS of that phase reported on its own.
    const fullSampler = setInterval(() => {
      peakRssCacheFull = Math.max(peakRssCacheFull, rssMbOf(gateway.child.pid!));
    }, 100);
    results.push(
      await run(
        "forwarded, distinct, cache filling",
        "chaingate",
        gateway.url,
        distinct(),
        32,
        pids,
        FULL_SECONDS,
      ),
    );
    clearInterval(fullSampler);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    cacheEntries = Number(/^chaingate_cache_entries (\d+)/m.exec(metrics)?.[1] ?? Number.NaN);
  }
} finally {
  for (const child of children) child.kill("SIGTERM");
  await anvil.stop();
}

const find = (name: string, target: string, c: number) =>
  results.find((r) => r.name === name && r.target === target && r.connections === c);
const ratio = (a: Case | undefined, b: Case | undefined) =>
  a && b && b.rps > 0 ? Math.round((a.rps / b.rps) * 100) / 100 : null;
/** chaingate's rate in a case as a multiple of a baseline's rate in another, beside the #17 goal. */
const versus = (ours: string, [theirs, baseline]: [string, string], c: number, target: string) => ({
  ratio: ratio(find(ours, "chaingate", c), find(theirs, baseline, c)),
  target,
});
/** The default configuration's rate over the tuned one's, summed over the rounds. */
const defaultVersusTuned = (name: string) => {
  const sum = (target: string) =>
    results.filter((r) => r.name === name && r.target === target).reduce((total, r) => total + r.rps, 0);
  const tuned = sum("tuned");
  return { ratio: tuned > 0 ? Math.round((sum("default") / tuned) * 100) / 100 : null, target: ">= 0.9" };
};
const targets = {
  default_vs_log_requests_false_cache_hit_32: defaultVersusTuned("config: cache hit"),
  default_vs_log_requests_false_forwarded_32: defaultVersusTuned("config: forwarded, distinct"),
  cache_hit_vs_ceiling_32: versus("cache hit", ["constant reply", "ceiling"], 32, ">= 0.9"),
  native_cache_hit_vs_ceiling_32: versus(
    "cache hit, Native path",
    ["constant reply", "ceiling"],
    32,
    ">= 0.9",
  ),
  cache_hit_vs_node_5ms_32: versus("cache hit, node 5 ms away", ["node 5 ms away", "node"], 32, ">= 10"),
  // What any Node server can reach behind that node on these cores: the constant reply's own multiple
  // of it (the line above cannot pass this, whatever chaingate does).
  ceiling_vs_node_5ms_32: {
    ratio: ratio(find("constant reply", "ceiling", 32), find("node 5 ms away", "node", 32)),
    target: "bound for the line above",
  },
  cache_hit_vs_node_1ms_32: versus("cache hit, node 1 ms away", ["node 1 ms away", "node"], 32, ""),
  forwarded_vs_forwarder_32: versus(
    "forwarded, distinct",
    ["forwarded, distinct", "forwarder"],
    32,
    ">= 0.9",
  ),
  // Not a #17 target: the cost of hedging's bookkeeping on reads that need no hedge (two names of
  // one anvil: the second is asked only when the first is slower than its p90).
  forwarded_two_upstreams_vs_one_32: versus(
    "forwarded, distinct, two upstreams",
    ["forwarded, distinct", "chaingate"],
    32,
    "",
  ),
  forwarded_vs_forwarder_1: versus("forwarded, distinct", ["forwarded, distinct", "forwarder"], 1, ">= 0.9"),
  forwarded_added_p50_ms_1: {
    ratio:
      Math.round(
        ((find("forwarded, distinct", "chaingate", 1)?.p50_ms ?? Number.NaN) -
          (find("forwarded, distinct", "anvil", 1)?.p50_ms ?? Number.NaN)) *
          1000,
      ) / 1000,
    target: "< 0.3",
  },
  peak_rss_mb: { ratio: Math.round(peakRss), target: "< 200" },
  // Not a #17 target: the same process after FULL_SECONDS more of distinct reads, cache full.
  peak_rss_mb_cache_full: { ratio: Math.round(peakRssCacheFull), target: `cache entries: ${cacheEntries}` },
};
/** Round by round, chaingate's case over its baseline's: rate ratio (min / median / max) and each side's CPU a request (medians). */
function overRounds(ours: string, theirs: string, baseline: string) {
  const a = results.filter((r) => r.name === ours && r.target === "chaingate");
  const b = results.filter((r) => r.name === theirs && r.target === baseline);
  if (a.length === 0 || a.length !== b.length) return null;
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const ratios = a.map((r, i) => Math.round((r.rps / Math.max(1, b[i]!.rps)) * 100) / 100);
  const cpu = (cases: Case[], pid: string) => ({
    ms_per_request: median(cases.map((r) => r.cpu_ms_per_request[pid] ?? Number.NaN)),
    user_ms_per_request: median(cases.map((r) => r.user_ms_per_request[pid] ?? Number.NaN)),
  });
  return {
    rounds: ratios.length,
    ratio: { min: Math.min(...ratios), median: median(ratios), max: Math.max(...ratios) },
    target: theirs.includes("forwarded") ? ">= 0.85 at <= 1.2x the CPU" : ">= 0.9",
    chaingate_cpu: cpu(a, "chaingate"),
    [`${baseline}_cpu`]: cpu(b, baseline),
  };
}
const overAlternatingRounds = {
  cache_hit_vs_ceiling_32: overRounds("round: cache hit", "round: constant reply", "ceiling"),
  native_cache_hit_vs_ceiling_32: overRounds(
    "round: cache hit, Native path",
    "round: constant reply",
    "ceiling",
  ),
  forwarded_vs_forwarder_32: overRounds(
    "round: forwarded, distinct",
    "round: forwarded, distinct",
    "forwarder",
  ),
};

console.table(
  results.map((r) => ({
    case: r.name,
    target: r.target,
    conns: r.connections,
    rps: r.rps,
    p50_ms: r.p50_ms,
    errors: r.errors,
    ...Object.fromEntries(Object.entries(r.cpu_ms_per_request).map(([k, v]) => [`cpu_ms/req ${k}`, v])),
  })),
);
console.table(targets);
console.log("over alternating rounds (#42):", JSON.stringify(overAlternatingRounds, null, 2));
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const when = new Date().toISOString();
const file = new URL(`./results/gateway-wrk-${when.replace(/[:.]/g, "-")}.json`, import.meta.url);
writeFileSync(
  file,
  `${JSON.stringify({ when, seconds_per_case: SECONDS, targets, over_alternating_rounds: overAlternatingRounds, results }, null, 2)}\n`,
);
console.log(`written to ${file.pathname}`);
rmSync(dir, { recursive: true, force: true });
