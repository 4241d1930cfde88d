/**
 * The cost of the gateway, measured in one run: requests/s and p50/p99 of direct anvil vs chaingate
 * (Native path and POST /) for eth_blockNumber, eth_getBalance, eth_getBlockByHash (cacheable) and
 * eth_getBalance at "pending" (forwarded, never cached: once repeating one request, which the
 * gateway may coalesce, and once with a distinct address per request, which it must forward), at
 * 1 and 32 connections, beside a plain
 * Fastify handler returning a constant (the ceiling of this stack here). chaingate runs as its own
 * process (dist/main.js) so its resident memory under load is its own.
 * Run: npm run bench:gateway   (writes bench/results/gateway-<timestamp>.json)
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { DEV, startBenchAnvil, startGatewayProcess } from "./bench-anvil.js";

const DURATION = Number(process.env.BENCH_SECONDS ?? 4);
const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-gw-"));
const { anvil, blockHash } = await startBenchAnvil(dir);

/** The ceiling: a plain Fastify handler returning a constant, in its own process like chaingate. */
const CEILING_SOURCE = `
  import Fastify from "fastify";
  const app = Fastify();
  app.post("/", async (_request, reply) => reply.type("application/json").send('{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
  console.log(await app.listen({ port: 0, host: "127.0.0.1" }));
`;
const ceiling = spawn(process.execPath, ["--input-type=module", "-e", CEILING_SOURCE], {
  cwd: new URL("..", import.meta.url).pathname,
  stdio: ["ignore", "pipe", "inherit"],
});
const ceilingUrl = await new Promise<string>((resolve, reject) => {
  ceiling.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString().trim()));
  ceiling.once("exit", (code) => reject(new Error(`ceiling server exited with ${code}`)));
});

interface Row {
  target: string;
  method: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function measure(
  target: string,
  url: string,
  method: string,
  params: unknown[],
  connections: number,
  native = false,
  distinct = false,
): Promise<Row> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  // Distinct: each request asks about another address, so neither the cache nor the coalescing of
  // identical in-flight calls can answer it: every one is forwarded to the node.
  let n = 0;
  const vary = () =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: [`0x${(++n).toString(16).padStart(40, "0")}`, ...params.slice(1)],
    });
  const result = await autocannon({
    url: native ? `${url}/${method}` : `${url}/`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    ...(distinct ? { requests: [{ setupRequest: (request) => ({ ...request, body: vary() }) }] } : {}),
    connections,
    duration: DURATION,
  });
  return {
    target,
    method,
    connections,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const gateway = await startGatewayProcess(anvil.url, join(dir, "gateway"));
let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, rssMb(gateway.child.pid!));
}, 100);

/** The last case asks about a different address each time: forwarding itself, not coalescing. */
const methods: [string, unknown[], "cacheable" | "forwarded", boolean][] = [
  ["eth_blockNumber", [], "cacheable", false],
  ["eth_getBalance", [DEV, "latest"], "cacheable", false],
  ["eth_getBlockByHash", [blockHash, false], "cacheable", false],
  ["eth_getBalance", [DEV, "pending"], "forwarded", false],
  ["eth_getBalance", [DEV, "pending"], "forwarded", true],
];
const rows: Row[] = [];
try {
  for (const connections of [1, 32]) {
    rows.push(await measure("ceiling", ceilingUrl, "constant", [], connections));
    for (const [method, params, , distinct] of methods) {
      const label = `${method}${params.includes("pending") ? (distinct ? "(pending, distinct)" : "(pending)") : ""}`;
      rows.push({
        ...(await measure("anvil", anvil.url, method, params, connections, false, distinct)),
        method: label,
      });
      rows.push({
        ...(await measure("chaingate POST /", gateway.url, method, params, connections, false, distinct)),
        method: label,
      });
      rows.push({
        ...(await measure("chaingate Native", gateway.url, method, params, connections, true, distinct)),
        method: label,
      });
    }
  }
} finally {
  clearInterval(sampler);
}

const find = (target: string, method: string, connections: number) =>
  rows.find((r) => r.target === target && r.method === method && r.connections === connections)!;
const ratios = rows
  .filter((r) => r.target.startsWith("chaingate"))
  .map((r) => {
    const direct = find("anvil", r.method, r.connections);
    const ceiling = find("ceiling", "constant", r.connections);
    const kind = r.method.includes("pending") ? "forwarded" : "cacheable";
    return {
      target: r.target,
      method: r.method,
      kind,
      connections: r.connections,
      rps: r.rps,
      anvil_rps: direct.rps,
      ratio_vs_anvil: Math.round((r.rps / direct.rps) * 100) / 100,
      target_vs_anvil: kind === "cacheable" ? ">= 1.5" : ">= 0.7",
      ratio_vs_ceiling: Math.round((r.rps / ceiling.rps) * 100) / 100,
      // One connection is a closed loop: mean latency = 1 / throughput, finer than autocannon's ms buckets.
      added_latency_ms:
        r.connections === 1 ? Math.round((1000 / r.rps - 1000 / direct.rps) * 1000) / 1000 : null,
      target_added_ms: kind === "forwarded" && r.connections === 1 ? "< 0.5" : "",
      p50_ms: r.p50,
      p99_ms: r.p99,
      errors: r.errors,
    };
  });
console.table(rows);
console.table(ratios);
const results = {
  when: new Date().toISOString(),
  seconds_per_case: DURATION,
  peak_rss_mb: Math.round(peakRss),
  target_rss_mb: 200,
  rows,
  ratios,
};
console.log(`chaingate peak RSS under load: ${results.peak_rss_mb} MB (target < 200 MB)`);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const file = new URL(`./results/gateway-${results.when.replace(/[:.]/g, "-")}.json`, import.meta.url);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`written to ${file.pathname}`);

gateway.child.kill("SIGTERM");
ceiling.kill("SIGTERM");
await anvil.stop();
rmSync(dir, { recursive: true, force: true });
