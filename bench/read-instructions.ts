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
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CEILING, FORWARDER } from "./baselines.js";
import { startBenchAnvil } from "./bench-anvil.js";
import {
  type Case,
  countingFromEnv,
  endCounting,
  measure,
  speed,
  startCountedBaseline,
  startCountedChaingate,
  tableRow,
  writeResults,
} from "./callgrind-process.js";

// One connection: requests one after another, the same order every run.
const COUNTING = countingFromEnv({ warmup: 10_000, windows: 5, requests: 600, connections: 1 });
const VERSUS = process.env.BENCH_VERSUS;
/** BENCH_BASELINES=false: chaingate alone (a profile, or two builds), without the ceiling and the forwarder. */
const BASELINES = process.env.BENCH_BASELINES !== "false";
const ROOT = new URL("..", import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-instr-"));
const { anvil, blockHash } = await startBenchAnvil(dir);

let distinct = 0x10_0000;
const HIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "eth_getBlockByHash",
  params: [blockHash, false],
});
const RESULT = '"result"';
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
  answerHolds: RESULT,
};
/** BENCH_CASES=hits: the two cache hits only (a forwarded read waits on anvil, the longest case); =forwarded: that one only. */
const ONLY_HITS = process.env.BENCH_CASES === "hits";
const ONLY_FORWARDED = process.env.BENCH_CASES === "forwarded";
const CASES: Case[] = [
  ...(ONLY_FORWARDED
    ? []
    : [
        { name: "hit on POST /", path: "/", body: () => HIT, answerHolds: RESULT },
        { name: "hit on a Native path", path: "/eth_getBlockByHash", body: () => HIT, answerHolds: RESULT },
      ]),
  ...(ONLY_HITS ? [] : [forwarded]),
];

const chaingate = (main: string, name: string) =>
  startCountedChaingate(dir, main, name, anvil.url).then((counted) =>
    measure(counted, name, CASES, COUNTING),
  );

try {
  const hitAnswer = await (
    await fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body: HIT })
  ).text();
  const ceiling =
    BASELINES && !ONLY_FORWARDED
      ? (
          await measure(
            await startCountedBaseline(dir, "ceiling", CEILING, [hitAnswer]),
            "ceiling",
            [{ name: "constant reply", path: "/", body: () => HIT, answerHolds: RESULT }],
            COUNTING,
          )
        )[0]
      : undefined;
  const forwarder = BASELINES
    ? ONLY_HITS
      ? undefined
      : (
          await measure(
            await startCountedBaseline(dir, "forwarder", FORWARDER, [anvil.url]),
            "forwarder",
            [forwarded],
            COUNTING,
          )
        )[0]
    : undefined;
  const mine = await chaingate(join(ROOT, "dist/main.js"), "this");
  const other = VERSUS === undefined ? undefined : await chaingate(join(VERSUS, "dist/main.js"), "versus");
  console.table([
    ...(ceiling === undefined ? [] : [tableRow("ceiling", ceiling)]),
    ...(forwarder === undefined ? [] : [tableRow("forwarder", forwarder)]),
    ...mine.map((m) => tableRow("this build", m)),
    ...(other ?? []).map((m) => tableRow("versus", m)),
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
  writeResults("read-instructions", {
    warmup: COUNTING.warmup,
    windows: COUNTING.windows,
    requests: COUNTING.requests,
    versus: VERSUS ?? null,
    ceiling: ceiling ?? null,
    forwarder: forwarder ?? null,
    mine,
    other: other ?? null,
    ratios,
  });
} finally {
  await endCounting(dir, () => anvil.stop());
}
