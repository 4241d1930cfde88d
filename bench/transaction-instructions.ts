/**
 * Instructions `POST /transaction` costs chaingate, counted by callgrind as `bench:read-instructions`
 * counts reads (decision 196): a measure of a transaction's CPU that does not move with the
 * machine's load, for changes of a few percent that wall-clock rounds cannot show.
 * - chaingate (dist/main.js, `npm start`'s flags and defaults: the access log on; only the signing
 *   rate limit off and the light KDF, as in `bench:transactions`) in front of an automining anvil
 *   (a fresh one for each subject, so none meets a longer chain than another),
 *   on SQLite or, with DATABASE_URL, on PostgreSQL; its background passes at their longest
 *   intervals, so a window holds the requests' own work: the tracker's later work on each
 *   transaction (receipt, confirmation) is not in the count;
 * - the baseline, the signing relay of bench/baselines.ts (native hash and sign, undici send,
 *   nothing kept), counted the same way: chaingate's count over it is what custody, records and
 *   durability add to the least a server must do;
 * - BENCH_CONNECTIONS (1: transactions one after another, the same order every run), a warm-up of
 *   BENCH_WARMUP (2,000) transfers, then BENCH_WINDOWS (5) windows of BENCH_REQUESTS (300), each
 *   less the collector's and the compilers' functions, the median the figure;
 * - BENCH_ADDRESSES (1): the wallet's addresses the transfers take turns from;
 * - BENCH_VERSUS=<dir>: another checkout's build measured the same way after this one (on
 *   PostgreSQL BENCH_VERSUS_DATABASE_URL, a second fresh database, is its store);
 * - what callgrind counts is user-space instructions: the kernel's work (fsync, sockets) and the
 *   PostgreSQL backends' are not in it; `bench:transactions` reads those as CPU time.
 * Run: npm run bench:transaction-instructions   (writes bench/results/transaction-instructions-<timestamp>.json)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { AnvilNode } from "../src/devnet/anvil-node.js";
import { SIGNING_RELAY } from "./baselines.js";
import { rpc, startBenchAnvil } from "./bench-anvil.js";
import { BENCH_TO } from "./bench-transfer.js";
import {
  type Case,
  countingFromEnv,
  endCounting,
  type Measured,
  measure,
  speed,
  startCountedBaseline,
  startCountedChaingate,
  tableRow,
  writeResults,
} from "./callgrind-process.js";

const COUNTING = countingFromEnv({ warmup: 2000, windows: 5, requests: 300, connections: 1 });
const ADDRESSES = Number(process.env.BENCH_ADDRESSES ?? 1);
const VERSUS = process.env.BENCH_VERSUS;
const DATABASE_URL = process.env.DATABASE_URL;
const VERSUS_DATABASE_URL = process.env.BENCH_VERSUS_DATABASE_URL;
if (VERSUS !== undefined && DATABASE_URL !== undefined && VERSUS_DATABASE_URL === undefined)
  throw new Error("BENCH_VERSUS on PostgreSQL needs BENCH_VERSUS_DATABASE_URL (a second fresh database)");
const BASELINES = process.env.BENCH_BASELINES !== "false";
const ROOT = new URL("..", import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-tx-instr-"));
/** The anvil of the subject being measured (stopped at the end, whatever happens). */
let running: AnvilNode | undefined;

/**
 * Each subject is measured in front of a fresh anvil of its own: on one anvil for all, the one
 * measured second met a chain some 3,000 blocks longer, slower to answer, and counted the
 * time-based work of longer requests (43 against 62-66 ms a request under callgrind for the same
 * code, about 3-4% more instructions: decision 202).
 */
async function withAnvil<T>(name: string, measureOn: (anvil: AnvilNode) => Promise<T>): Promise<T> {
  const { anvil } = await startBenchAnvil(join(dir, name));
  running = anvil;
  try {
    return await measureOn(anvil);
  } finally {
    running = undefined;
    await anvil.stop();
  }
}

const fund = (anvil: AnvilNode, address: string) =>
  rpc(anvil.url, "anvil_setBalance", [address, `0x${parseEther("1000").toString(16)}`]);

/** Transfers of 1, 2, 3... wei to the bench's recipient, as `bench:transactions` sends them. */
const transferCase = (name: string, body: (n: number) => object): Case => ({
  name,
  path: "/transaction",
  body: (n) => JSON.stringify(body(n)),
  answerHolds: '"tx_hash"',
});

/** `POST /transaction` of chaingate `main` (a wallet of ADDRESSES addresses, made and funded before counting). */
async function chaingate(anvil: AnvilNode, main: string, name: string, databaseUrl: string | undefined) {
  const counted = await startCountedChaingate(dir, main, name, anvil.url, {
    CHAINGATE_LOG_REQUESTS: "true",
    CHAINGATE_KDF: "light",
    CHAINGATE_RATE_SIGN: "0",
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
  });
  const made = await fetch(`${counted.url}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "KEYSTORE_V3", password: "bench", address_quantity: ADDRESSES }),
  });
  if (!made.ok) throw new Error(`POST /wallet answered ${made.status}: ${await made.text()}`);
  const records = (await made.json()) as { id: string; address: string }[];
  await Promise.all(records.map((r) => fund(anvil, r.address)));
  const walletId = records[0]!.id;
  return measure(
    counted,
    name,
    [
      transferCase(`POST /transaction, ${ADDRESSES} address${ADDRESSES === 1 ? "" : "es"}`, (n) => ({
        wallet_id: walletId,
        password: "bench",
        index: n % ADDRESSES,
        transaction: { to: BENCH_TO, value: String(n + 1) },
      })),
    ],
    COUNTING,
  );
}

try {
  let relay: Measured | undefined;
  if (BASELINES) {
    relay = await withAnvil("relay", async (anvil) => {
      const key = generatePrivateKey();
      await fund(anvil, privateKeyToAccount(key).address);
      const counted = await startCountedBaseline(dir, "relay", SIGNING_RELAY, [anvil.url, key]);
      return (
        await measure(
          counted,
          "relay",
          [transferCase("signing relay", (n) => ({ transaction: { to: BENCH_TO, value: String(n + 1) } }))],
          COUNTING,
        )
      )[0];
    });
  }
  const mine = await withAnvil("this", (anvil) =>
    chaingate(anvil, join(ROOT, "dist/main.js"), "this", DATABASE_URL),
  );
  const other =
    VERSUS === undefined
      ? undefined
      : await withAnvil("versus", (anvil) =>
          chaingate(anvil, join(VERSUS, "dist/main.js"), "versus", VERSUS_DATABASE_URL ?? DATABASE_URL),
        );
  console.table([
    ...(relay === undefined ? [] : [tableRow("signing relay", relay)]),
    ...mine.map((m) => tableRow("this build", m)),
    ...(other ?? []).map((m) => tableRow("versus", m)),
  ]);
  const ratios = {
    ...(relay === undefined ? {} : { transaction_vs_relay: speed(relay, mine[0]!) }),
    ...(other === undefined ? {} : { "this build vs versus": speed(other[0]!, mine[0]!) }),
  };
  console.log(ratios);
  writeResults("transaction-instructions", {
    store: DATABASE_URL === undefined ? "sqlite" : "postgres",
    addresses: ADDRESSES,
    warmup: COUNTING.warmup,
    windows: COUNTING.windows,
    requests: COUNTING.requests,
    versus: VERSUS ?? null,
    relay: relay ?? null,
    mine,
    other: other ?? null,
    ratios,
  });
} finally {
  await endCounting(dir, async () => {
    await running?.stop();
  });
}
