/**
 * Hedged reads against a slow upstream (#44's latency target), as ratios in one run: one anvil
 * behind two proxies of one chain, the "slow" one holding every 10th answer 500 ms, the "fast" one
 * passing everything at once. Distinct reads (eth_getBalance of a new address each: no cache, no
 * coalescing) at BENCH_CONCURRENCY (8) connections, BENCH_READS (2000) per case and round, in ABBA
 * rounds (BENCH_ROUNDS, 4):
 *   A: through chaingate with both upstreams, hedging as configured by default;
 *   B: straight to the fast upstream (what a client of the fast node alone sees);
 * and once per round, for context, chaingate with `"hedge": false`, and chaingate in front of the
 * fast upstream alone (what chaingate itself adds, with no slow upstream to hedge around).
 * Target: chaingate's p99 <= 1.5 x the fast upstream's p99 + 5 ms (on all rounds' samples, and
 * reported per round). Each process is its own (anvil, the proxies, chaingate), so the bench's
 * client is not charged to them.
 * Run: npm run bench:hedged-reads   (writes bench/results/hedged-reads-<timestamp>.json)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { startGatewayProcess, startPlainAnvil } from "./bench-anvil.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const READS = Number(process.env.BENCH_READS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SLOW_MS = 500;
/** Every SLOW_EVERY-th answer of the slow upstream is held SLOW_MS: 10% of them. */
const SLOW_EVERY = 10;

/** A proxy in front of `target` (its own process): every `every`-th answer waits `delay` ms first. */
const PROXY = `
  import { Agent, createServer, request } from "node:http";
  const [target, delay, every] = [new URL(process.argv[1]), Number(process.argv[2]), Number(process.argv[3])];
  const keep = new Agent({ keepAlive: true, maxSockets: 64 });
  let seen = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c)).on("end", () => {
      const held = every > 0 && ++seen % every === 0 ? delay : 0;
      const out = request({ host: target.hostname, port: target.port, path: "/", method: "POST",
        headers: { "content-type": "application/json" }, agent: keep }, (answer) => {
        const parts = [];
        answer.on("data", (c) => parts.push(c)).on("end", () => setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(answer.statusCode, { "content-type": "application/json" });
          res.end(Buffer.concat(parts));
        }, held));
      });
      out.on("error", () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
    res.on("error", () => {});
  });
  server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port));
`;

const started: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-hedge-"));

function startProxy(target: string, delay: number, every: number): Promise<string> {
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", PROXY, target, String(delay), String(every)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  started.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once("exit", () => reject(new Error("proxy exited")));
  });
}

function gateway(upstreams: string[], name: string, hedge?: false): Promise<{ url: string }> {
  const dataDir = join(dir, name);
  mkdirSync(dataDir, { recursive: true });
  const config = join(dataDir, "chains.json");
  writeFileSync(
    config,
    JSON.stringify({
      chains: [
        {
          chainId: 1001,
          upstreams: upstreams.map((url) => ({ url })),
          finality: 1,
          ...(hedge === false ? { hedge: false } : {}),
        },
      ],
    }),
  );
  return startGatewayProcess(upstreams[0]!, dataDir, started, { CHAINGATE_CONFIG: config });
}

let nextAddress = 1;
/** `reads` distinct reads at `concurrency` connections; answers each one's latency in ms, sorted. */
async function measure(url: string, reads: number): Promise<number[]> {
  const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
  const latencies: number[] = [];
  let left = reads;
  const worker = async () => {
    while (left-- > 0) {
      const address = `0x${(nextAddress++).toString(16).padStart(40, "0")}`;
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_getBalance",
        params: [address, "latest"],
      });
      const began = performance.now();
      const answer = await pool.request({
        path: "/",
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const text = await answer.body.text();
      latencies.push(performance.now() - began);
      if (!text.includes('"result"')) throw new Error(`not answered: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await pool.close();
  return latencies.sort((a, b) => a - b);
}

const pct = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const ms = (n: number) => Math.round(n * 100) / 100;

try {
  const anvil = await startPlainAnvil(started);
  const [slow, fast] = await Promise.all([
    startProxy(anvil.url, SLOW_MS, SLOW_EVERY),
    startProxy(anvil.url, 0, 0),
  ]);
  const [hedging, plain, alone] = await Promise.all([
    gateway([slow, fast], "hedging"),
    gateway([slow, fast], "plain", false),
    gateway([fast], "alone"),
  ]);
  // Warm-up: connections, every process's JIT (the proxies' too: a first round measured before
  // they were warm was slower on both sides, the fast upstream's own p99 up to twice its later
  // rounds'), and the slow upstream's p90 (64 answers) learnt.
  for (let pass = 0; pass < 3; pass++) {
    await measure(hedging.url, 1000);
    await measure(fast, 1000);
  }
  await measure(plain.url, 100);
  await measure(alone.url, 100);
  const all = {
    chaingate: [] as number[],
    fast: [] as number[],
    unhedged: [] as number[],
    fastOnly: [] as number[],
  };
  const rounds: { chaingate_p99: number; fast_p99: number; target_ms: number; met: boolean }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["A", "B"] as const) : (["B", "A"] as const);
    const got: Record<"A" | "B", number[]> = { A: [], B: [] };
    for (const side of order) got[side] = await measure(side === "A" ? hedging.url : fast, READS);
    const unhedged = await measure(plain.url, Math.round(READS / 4));
    const fastOnly = await measure(alone.url, Math.round(READS / 2));
    all.fastOnly.push(...fastOnly);
    all.chaingate.push(...got.A);
    all.fast.push(...got.B);
    all.unhedged.push(...unhedged);
    const target = 1.5 * pct(got.B, 0.99) + 5;
    rounds.push({
      chaingate_p99: ms(pct(got.A, 0.99)),
      fast_p99: ms(pct(got.B, 0.99)),
      target_ms: ms(target),
      met: pct(got.A, 0.99) <= target,
    });
    console.log(
      `round ${round + 1}: chaingate p50 ${ms(pct(got.A, 0.5))} p99 ${ms(pct(got.A, 0.99))} ms; fast upstream p50 ${ms(pct(got.B, 0.5))} p99 ${ms(pct(got.B, 0.99))} ms; target <= ${ms(target)} ms; hedge off p99 ${ms(
        pct(
          unhedged.sort((a, b) => a - b),
          0.99,
        ),
      )} ms`,
    );
  }
  for (const list of Object.values(all)) list.sort((a, b) => a - b);
  // How often the slow upstream was asked first and had to be hedged, per upstream, from chaingate's own metrics.
  const metrics = await (await fetch(`${hedging.url}/metrics`)).text();
  const hedges = metrics
    .split("\n")
    .filter((line) => line.startsWith("chaingate_upstream_hedge"))
    .map((line) => line.replace(/,?chain="1001",?/, ""));
  const target = 1.5 * pct(all.fast, 0.99) + 5;
  const summary = {
    reads_per_case_and_round: READS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    slow_upstream: `every ${SLOW_EVERY}th answer held ${SLOW_MS} ms`,
    chaingate: { p50_ms: ms(pct(all.chaingate, 0.5)), p99_ms: ms(pct(all.chaingate, 0.99)) },
    fast_upstream: { p50_ms: ms(pct(all.fast, 0.5)), p99_ms: ms(pct(all.fast, 0.99)) },
    hedge_off: { p50_ms: ms(pct(all.unhedged, 0.5)), p99_ms: ms(pct(all.unhedged, 0.99)) },
    chaingate_before_fast_upstream_alone: {
      p50_ms: ms(pct(all.fastOnly, 0.5)),
      p99_ms: ms(pct(all.fastOnly, 0.99)),
    },
    target_ms: ms(target),
    target_met: pct(all.chaingate, 0.99) <= target,
    hedge_counts: hedges,
    per_round: rounds,
  };
  console.log(JSON.stringify(summary, null, 2));
  const results = new URL("./results/", import.meta.url).pathname;
  mkdirSync(results, { recursive: true });
  writeFileSync(
    join(results, `hedged-reads-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    `${JSON.stringify(summary, null, 2)}\n`,
  );
} finally {
  for (const child of started) child.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
