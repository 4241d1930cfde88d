/**
 * The response cache under distinct reads: the cost of storing an answer once the cache is full
 * against while it fills (a ratio: the eviction walk must not grow with the cache), and the heap an
 * entry takes against what the cache counts it as (its budget must bound its memory).
 * Run: npm run bench:response-cache   (writes bench/results/response-cache-<timestamp>.json)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { METHODS_BY_NAME } from "../src/rpc/method-table.js";
import { ENTRY_OVERHEAD_BYTES, ResponseCache } from "../src/rpc/response-cache.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const BUDGET_MB = Number(process.env.BENCH_CACHE_MB ?? 32);
const balance = METHODS_BY_NAME.get("eth_getBalance")!;
const cache = new ResponseCache(BUDGET_MB * 1024 * 1024);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

let next = 0;
/** Stores `count` distinct balances; answers microseconds per store. */
async function store(count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++, next++) {
    const address = `0x${(0x1_0000_0000 + next).toString(16).padStart(40, "0")}`;
    await cache.get(1, 1, balance, [address, "latest"], async () => "0x1");
  }
  return ((performance.now() - started) * 1000) / count;
}

gc();
const empty = process.memoryUsage().heapUsed;
// While it fills: the first half of what it holds.
const perEntry = (ENTRY_OVERHEAD_BYTES + 80) as number;
const capacity = Math.floor((BUDGET_MB * 1024 * 1024) / perEntry);
const filling = await store(Math.floor(capacity / 2));
await store(capacity);
gc();
const held = process.memoryUsage().heapUsed - empty;
const entries = cache.size;
// Full: every store evicts. Five rounds of a full cache's worth each.
const full: number[] = [];
for (let r = 0; r < 5; r++) full.push(await store(capacity));

const result = {
  when: new Date().toISOString(),
  budget_mb: BUDGET_MB,
  entries,
  heap_mb_held: round(held / 1048576),
  heap_vs_budget: round(held / (BUDGET_MB * 1048576)),
  heap_bytes_per_entry: Math.round(held / entries),
  store_us_filling: round(filling),
  store_us_full_rounds: full.map((x) => round(x)),
  full_vs_filling_worst: round(Math.max(...full) / filling),
};
console.table(result);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const file = new URL(`./results/response-cache-${result.when.replace(/[:.]/g, "-")}.json`, import.meta.url);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written to ${file.pathname}`);
