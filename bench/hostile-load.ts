/**
 * 20,000 requests at 32 in flight, 10% of them malformed, against chaingate on its embedded default
 * (its own process, request logging on): every well-formed request must succeed, every malformed one
 * must get a 4xx or a JSON-RPC error, and resident memory (sampled every 100 ms) is reported.
 * Run: npm run bench:hostile   (writes bench/results/hostile-load-<timestamp>.json)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rssMbOf } from "./bench-stats.js";
import { startChaingateProcess } from "./chaingate-process.js";

const TOTAL = Number(process.env.BENCH_REQUESTS ?? 20_000);
const IN_FLIGHT = 32;
const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-hostile-"));
// One client sends all 20,000: its filter quota is raised so the 1,800 filters it installs count as load.
const { child, url } = await startChaingateProcess({
  CHAINGATE_DATA_DIR: dir,
  CHAINGATE_RATE_SIGN: "0",
  CHAINGATE_MAX_FILTERS_PER_KEY: "100000",
});

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, text };
}

// Set-up before measuring: a wallet (standard KDF) and its first unlock, so the load signs from the cache.
const created = await post(
  "/wallet",
  JSON.stringify({ type: "KEYSTORE_V3", password: "bench", address_quantity: 1 }),
);
const wallet = (JSON.parse(created.text) as { id: string; address: string }[])[0]!;
await post(
  "/transaction",
  JSON.stringify({
    wallet_id: wallet.id,
    password: "bench",
    transaction: { to: wallet.address, value: "0" },
  }),
);

const env = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const WELL_FORMED: (() => [string, string])[] = [
  () => ["/eth_blockNumber", ""],
  () => ["/", env("eth_chainId", [])],
  () => ["/eth_getBalance", env("eth_getBalance", [wallet.address, "latest"])],
  () => ["/", env("eth_getBlockByNumber", ["latest", false])],
  () => ["/eth_gasPrice", ""],
  () => ["/list_all_members", "{}"],
  () => ["/list_all_transfers", JSON.stringify({ limit: 5 })],
  () => ["/eth_newBlockFilter", ""],
  () => ["/", JSON.stringify([JSON.parse(env("eth_chainId", [])), JSON.parse(env("eth_blockNumber", []))])],
  () => [
    "/transaction",
    JSON.stringify({
      wallet_id: wallet.id,
      password: "bench",
      transaction: { to: wallet.address, value: "1" },
    }),
  ],
];
const MALFORMED: (() => [string, string])[] = [
  () => ["/", "{not json"],
  () => ["/", env("eth_noSuchMethod", [])],
  () => ["/eth_getBalance", env("eth_getBalance", ["0x12", "latest"])],
  () => ["/", `${"[".repeat(200)}${"]".repeat(200)}`],
  () => ["/", JSON.stringify(Array.from({ length: 500 }, () => JSON.parse(env("eth_chainId", []))))],
  () => ["/eth_call", JSON.stringify({ params: ["x".repeat(2 * 1024 * 1024)] })],
  () => [
    "/transaction",
    JSON.stringify({ wallet_id: wallet.id, password: "wrong", transaction: { to: "0x1" } }),
  ],
  () => ["/create_new_ERC20_token", JSON.stringify({ name: 1 })],
  () => ["/wallet", JSON.stringify({ type: "OTHER", address_quantity: -1 })],
  () => ["/", JSON.stringify({ jsonrpc: "1.0", method: 5 })],
];

function ok(path: string, answer: { status: number; text: string }): boolean {
  if (answer.status !== 200) return false;
  const json = JSON.parse(answer.text) as unknown;
  const answers = Array.isArray(json) ? json : [json];
  return (
    answers.every((a) => typeof a === "object" && a !== null && !("error" in a)) &&
    (path !== "/transaction" || answer.text.includes("tx_hash"))
  );
}
function refused(answer: { status: number; text: string }): boolean {
  if (answer.status >= 500) return false;
  if (answer.status >= 400) return true;
  const json = JSON.parse(answer.text) as unknown;
  return (Array.isArray(json) ? json : [json]).some(
    (a) => typeof a === "object" && a !== null && "error" in a,
  );
}

const samples: number[] = [];
const rss = () => rssMbOf(child.pid!);
const sampler = setInterval(() => samples.push(rss()), 100);

let next = 0;
const outcome = { wellFormed: 0, wellFormedFailed: 0, malformed: 0, malformedRefused: 0, serverErrors: 0 };
const failures: string[] = [];
const started = Date.now();
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (next < TOTAL) {
      const i = next++;
      const bad = i % 10 === 0;
      const [path, body] = bad
        ? MALFORMED[(i / 10) % MALFORMED.length]!()
        : WELL_FORMED[i % WELL_FORMED.length]!();
      let answer: { status: number; text: string };
      try {
        answer = await post(path, body);
      } catch (error) {
        // A body over the limit is answered 413 and the connection closed while the client still
        // writes: the client sees the write fail. That is the server refusing, not failing.
        answer = { status: body.length > 1024 * 1024 ? 413 : 599, text: String(error) };
      }
      if (answer.status >= 500) outcome.serverErrors++;
      if (bad) {
        outcome.malformed++;
        if (refused(answer)) outcome.malformedRefused++;
        else if (failures.length < 5)
          failures.push(`malformed ${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
      } else {
        outcome.wellFormed++;
        if (!ok(path, answer)) {
          outcome.wellFormedFailed++;
          if (failures.length < 5) failures.push(`${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
        }
      }
    }
  }),
);
const seconds = (Date.now() - started) / 1000;
clearInterval(sampler);
samples.push(rss());
child.kill("SIGTERM");
await new Promise((r) => child.once("exit", r));
rmSync(dir, { recursive: true, force: true });

const result = {
  requests: TOTAL,
  seconds,
  rps: Math.round(TOTAL / seconds),
  ...outcome,
  rss_max_mb: Math.round(Math.max(...samples)),
  rss_last_mb: Math.round(samples.at(-1)!),
  failures,
};
console.table([result]);
mkdirSync(new URL("results", import.meta.url).pathname, { recursive: true });
const file = new URL(
  `results/hostile-load-${new Date().toISOString().replaceAll(":", "-")}.json`,
  import.meta.url,
).pathname;
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${file}`);
if (outcome.wellFormedFailed > 0 || outcome.malformedRefused < outcome.malformed || outcome.serverErrors > 0)
  process.exitCode = 1;
