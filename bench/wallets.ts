/**
 * Wallet benchmark (standard KDF, N=2^18): creation cost of 20 addresses vs 1 in the same run,
 * the second unlock within the cache time, and 10 concurrent creations while Native calls are timed.
 * Run: npm run bench:wallets   (writes bench/results/wallets-<timestamp>.json)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { loadConfig } from "../src/config/load-config.js";
import { startChaingate } from "../src/runtime.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const dataDir = mkdtempSync(join(tmpdir(), "chaingate-bench-wallets-"));
const config = loadConfig({
  env: {
    PORT: "0",
    CHAINGATE_DATA_DIR: dataDir,
    CHAINGATE_KDF: "standard",
    LOG_LEVEL: "silent",
    CHAINGATE_RATE_WALLETS: "0",
  },
});
const rt = await startChaingate(config, { logger: pino({ level: "silent" }) });

async function createWallet(quantity: number): Promise<{ ms: number; id: string }> {
  const start = performance.now();
  const response = await fetch(`${rt.url}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "KEYSTORE_V3", password: "bench-password", address_quantity: quantity }),
  });
  const body = (await response.json()) as { id: string }[];
  if (response.status !== 200) throw new Error(`create failed: ${JSON.stringify(body)}`);
  return { ms: performance.now() - start, id: body[0]!.id };
}

async function nativeCall(): Promise<number> {
  const start = performance.now();
  const response = await fetch(`${rt.url}/eth_blockNumber`, { method: "POST" });
  await response.text();
  return performance.now() - start;
}

try {
  await createWallet(1); // warm-up: JIT, first scrypt allocation
  const one: number[] = [];
  const twenty: number[] = [];
  for (let i = 0; i < 5; i++) {
    one.push((await createWallet(1)).ms);
    twenty.push((await createWallet(20)).ms);
  }

  const { id } = await createWallet(1);
  await rt.wallets.unlock(id, 0, "bench-password");
  const warm: number[] = [];
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    await rt.wallets.unlock(id, 0, "bench-password");
    warm.push(performance.now() - start);
  }

  const baselineNative: number[] = [];
  for (let i = 0; i < 20; i++) baselineNative.push(await nativeCall());

  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  const during: number[] = [];
  let busy = true;
  const prober = (async () => {
    while (busy) {
      during.push(await nativeCall());
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const burstStart = performance.now();
  await Promise.all(Array.from({ length: 10 }, () => createWallet(5)));
  const burstMs = performance.now() - burstStart;
  busy = false;
  await prober;
  clearInterval(sampler);

  const results = {
    when: new Date().toISOString(),
    kdf: "scrypt N=2^18 r=8 p=1",
    create_1_address_ms_median: round(median(one)),
    create_20_addresses_ms_median: round(median(twenty)),
    ratio_20_vs_1: round(median(twenty) / median(one), 3),
    target_ratio_max: 1.3,
    second_unlock_ms_median: round(median(warm), 3),
    second_unlock_ms_max: round(Math.max(...warm), 3),
    target_second_unlock_ms_max: 5,
    native_call_ms_median_idle: round(median(baselineNative)),
    native_calls_during_burst: during.length,
    native_call_ms_median_during_10_concurrent_creations: round(median(during)),
    native_call_ms_max_during_10_concurrent_creations: round(Math.max(...during)),
    target_native_call_ms_max: 50,
    burst_10_wallets_ms: round(burstMs),
    peak_rss_mb: round(peakRss / 1024 / 1024, 1),
  };
  console.table(results);
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  const file = new URL(`./results/wallets-${results.when.replace(/[:.]/g, "-")}.json`, import.meta.url);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written to ${file.pathname}`);
} finally {
  await rt.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
