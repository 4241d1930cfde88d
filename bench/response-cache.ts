/**
 * The response cache under distinct reads: the cost of storing an answer once the cache is full
 * against while it fills (a ratio: the eviction walk must not grow with the cache), and the heap an
 * entry takes against what the cache counts it as (its budget must bound its memory). Then, in a
 * cache of its own, a working set of blocks read by hash (kept forever) among one-off reads of
 * `latest` balances while the head moves: how often the working set is still there (answers kept
 * for a head the chain left are dead, decision 206). Last, the store that moves a full cache's head
 * on: how long it holds the event loop, at each of five new heads (decision 244).
 * `BENCH_VERSUS=<another checkout>` runs those two phases with that checkout's cache too.
 * Run: npm run bench:response-cache   (writes bench/results/response-cache-<timestamp>.json)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { METHODS_BY_NAME } from "../src/rpc/method-table.js";
import { ENTRY_OVERHEAD_BYTES, ResponseCache } from "../src/rpc/response-cache.js";
import { envelopeParts, type JsonText, resultJsonText } from "../src/upstream/json-text.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const BUDGET_MB = Number(process.env.BENCH_CACHE_MB ?? 32);
const balance = METHODS_BY_NAME.get("eth_getBalance")!;
const cache = new ResponseCache(BUDGET_MB * 1024 * 1024);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * A node's answer to a balance read, read from its bytes as the upstream reads it
 * (`http-upstream.ts`): what a forwarded read keeps, strings and all.
 */
function balanceAnswer(n: number): JsonText {
  const balance = (0x56bc75e2d63100000n + BigInt(n)).toString(16);
  const bytes = Buffer.from(`{"jsonrpc":"2.0","id":${n},"result":"0x${balance}"}`, "latin1");
  return resultJsonText(envelopeParts(bytes.toString("latin1")).result!, bytes, true);
}

let next = 0;
/** Stores `count` distinct balances, each answered as a node answers it; answers microseconds per store. */
async function store(count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++, next++) {
    const address = `0x${(0x1_0000_0000 + next).toString(16).padStart(40, "0")}`;
    const n = next;
    await cache.get(1, 1, balance, [address, "latest"], async () => balanceAnswer(n));
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

/**
 * Hits among the working set's reads, heads 3 to 20 (the first two fill the cache): a block of it
 * read once every four balance reads, each balance read twice at its head (so it is marked read,
 * as a popular `latest` answer is) and never again.
 */
async function movingHead(
  Cache: typeof ResponseCache,
): Promise<{ hit_rate: number; entries_at_end: number }> {
  const moving = new Cache(BUDGET_MB * 1024 * 1024);
  const block = METHODS_BY_NAME.get("eth_getBlockByHash")!;
  const WORKING_SET = 15_000;
  const PER_HEAD = 20_000;
  const answer = "b".repeat(1_200);
  let hits = 0;
  let reads = 0;
  // xorshift32: the same reads for every build.
  let seed = 1;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  for (let head = 1, one = 0; head <= 20; head++) {
    for (let i = 0; i < PER_HEAD; i++, one++) {
      const address = `0x${(0x2_0000_0000 + one).toString(16).padStart(40, "0")}`;
      for (let twice = 0; twice < 2; twice++)
        await moving.get(1, head, balance, [address, "latest"], async () => "0x1");
      if (i % 4 !== 0) continue;
      const hash = `0x${Math.floor(random() * WORKING_SET)
        .toString(16)
        .padStart(64, "0")}`;
      let fetched = false;
      await moving.get(1, head, block, [hash, false], async () => {
        fetched = true;
        return answer;
      });
      if (head > 2) {
        reads++;
        if (!fetched) hits++;
      }
    }
  }
  return { hit_rate: round(hits / reads, 3), entries_at_end: moving.size };
}

/** Milliseconds of the store that moves the head on, each after a full cache's worth of balances at the head before. */
async function headMoves(Cache: typeof ResponseCache): Promise<number[]> {
  const moving = new Cache(BUDGET_MB * 1024 * 1024);
  const times: number[] = [];
  for (let head = 1, one = 0; head <= 6; head++) {
    for (let i = 0; i < capacity; i++, one++) {
      const address = `0x${(0x3_0000_0000 + one).toString(16).padStart(40, "0")}`;
      const n = one;
      const started = performance.now();
      await moving.get(1, head, balance, [address, "latest"], async () => balanceAnswer(n));
      if (i === 0 && head > 1) times.push(round(performance.now() - started, 3));
    }
  }
  return times;
}

const VERSUS = process.env.BENCH_VERSUS;
const other = VERSUS
  ? ((await import(`${VERSUS}/src/rpc/response-cache.ts`)) as { ResponseCache: typeof ResponseCache })
  : undefined;
const headMoving = await movingHead(ResponseCache);
const otherHeadMoving = other ? await movingHead(other.ResponseCache) : undefined;
const moves = await headMoves(ResponseCache);
const otherMoves = other ? await headMoves(other.ResponseCache) : undefined;

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
  /** 15,000 blocks by hash (1,200 characters each), one read at random every fourth of 20,000 balances a head (each read twice at its head), 20 heads. */
  moving_head_working_set_hit_rate: headMoving.hit_rate,
  moving_head_entries_at_end: headMoving.entries_at_end,
  /** The store that moves a full cache's head on, five times: milliseconds each. */
  head_move_store_ms: moves,
  ...(otherHeadMoving
    ? {
        versus: VERSUS,
        versus_moving_head_working_set_hit_rate: otherHeadMoving.hit_rate,
        versus_moving_head_entries_at_end: otherHeadMoving.entries_at_end,
        versus_head_move_store_ms: otherMoves,
      }
    : {}),
};
console.table(result);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const file = new URL(`./results/response-cache-${result.when.replace(/[:.]/g, "-")}.json`, import.meta.url);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written to ${file.pathname}`);
