/**
 * POST /transaction throughput and latency, side by side in one run with the rate at which the same
 * anvil accepts pre-signed raw transactions sent to it directly (the ceiling) and transactions a
 * client signs then sends. chaingate runs built, as its own process (as `npm start` runs it), in
 * front of a bare anvil; the CPU each process spends per transaction is read from /proc.
 *
 * The node makes a block every BENCH_BLOCK_TIME seconds (default 1), as a real chain does. Under
 * automine (BENCH_BLOCK_TIME=0) anvil 1.7 leaves most of a burst's ready transactions unmined and
 * spins a core on them (foundry-rs/foundry#10122): it then measures a node that does not mine, and
 * that stall eats the CPU of every later round. Each round ends when its sender's transactions are
 * all mined (or a deadline passes, which the results say), so no round leaves work for the next.
 * Run: npm run bench:transactions   (writes bench/results/transactions-<timestamp>.json)
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { type Hex, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startGatewayProcess, startPlainAnvil } from "./bench-anvil.js";

const COUNT = Number(process.env.BENCH_TX_COUNT ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ROUNDS = 2;
const TO = "0x70997970C51812DC3A010C7901B1FCcCCc3F7Aa2".toLowerCase() as Hex;

const BLOCK_TIME = Number(process.env.BENCH_BLOCK_TIME ?? 1);
/** How long a round may wait for its transactions to be mined before it is reported as not mined. */
const MINED_DEADLINE_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-tx-"));
const started: ChildProcess[] = [];
const plain = await startPlainAnvil(started, BLOCK_TIME > 0 ? ["--block-time", String(BLOCK_TIME)] : []);
const anvilUrl = plain.url;
// The benchmark measures throughput, not the default signing rate limit or the password KDF.
process.env.CHAINGATE_KDF = "light";
process.env.CHAINGATE_RATE_SIGN = "0";
process.env.CHAINGATE_TRACKER_INTERVAL_MS ??= "1000";
const gatewayProcess = await startGatewayProcess(anvilUrl, join(dir, "data"), started);
const pids = { chaingate: gatewayProcess.child.pid!, anvil: plain.child.pid! };

/** CPU seconds a process has used (user + system), from /proc: the processes share the two cores. */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ ticks
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** The sender's nonce in the latest block: how many of its transactions are mined. */
async function minedCount(address: string): Promise<number> {
  const { text } = await post(anvil, "/", {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_getTransactionCount",
    params: [address, "latest"],
  });
  return Number(BigInt((JSON.parse(text) as { result: string }).result));
}

async function blockNumber(): Promise<number> {
  const { text } = await post(anvil, "/", { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
  return Number(BigInt((JSON.parse(text) as { result: string }).result));
}

/** chaingate's records in `confirmed`, from its own gauge (all rounds so far). */
async function confirmedRecords(): Promise<number> {
  const response = await gateway.request({ path: "/metrics", method: "GET" });
  const text = await response.body.text();
  const line = /^chaingate_transactions\{state="confirmed"\} (\d+)/m.exec(text);
  return line ? Number(line[1]) : 0;
}

/**
 * Runs `count` requests with `concurrency` in flight from `sender` (whose nonce starts at 0), then
 * waits until all `count` transactions are mined and `settled()` holds (chaingate: its tracker has
 * recorded them confirmed). Returns the accepted rate (requests/s), the mined rate, per-request
 * latencies and each process's CPU per transaction up to then (anvil's mining, chaingate's tracking).
 */
async function drive(
  sender: string,
  count: number,
  concurrency: number,
  one: (i: number) => Promise<void>,
  settled: () => Promise<boolean> = async () => true,
) {
  const latencies: number[] = [];
  let next = 0;
  const firstBlock = await blockNumber();
  const start = performance.now();
  const cpu = process.cpuUsage();
  const anvilCpu = processCpuSeconds(pids.anvil);
  const gatewayCpu = processCpuSeconds(pids.chaingate);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await one(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const deadline = performance.now() + MINED_DEADLINE_MS;
  let mined = await minedCount(sender);
  while (mined < count && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    mined = await minedCount(sender);
  }
  const minedSeconds = (performance.now() - start) / 1000;
  let done = await settled();
  while (!done && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    done = await settled();
  }
  return {
    rps: count / seconds,
    /** Transactions mined per second, from the first request to the block holding the last one. */
    minedRps: count / minedSeconds,
    allMined: mined >= count && done,
    blocks: (await blockNumber()) - firstBlock,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    /** The bench process: the client. */
    cpuMsPerRequest: (used.user + used.system) / 1000 / count,
    anvilCpuMsPerRequest: ((processCpuSeconds(pids.anvil) - anvilCpu) * 1000) / count,
    gatewayCpuMsPerRequest: ((processCpuSeconds(pids.chaingate) - gatewayCpu) * 1000) / count,
  };
}

async function post(pool: Pool, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, text: await response.body.text() };
}

const anvil = new Pool(new URL(anvilUrl).origin, { connections: CONCURRENCY });
const gateway = new Pool(new URL(gatewayProcess.url).origin, { connections: CONCURRENCY });

/** A fresh key per round, funded directly on anvil. */
async function fundedAccount() {
  const account = privateKeyToAccount(generatePrivateKey());
  const balance = `0x${parseEther("1000").toString(16)}`;
  await post(anvil, "/", {
    jsonrpc: "2.0",
    id: 1,
    method: "anvil_setBalance",
    params: [account.address, balance],
  });
  return account;
}

const transfer = (nonce: number) =>
  ({
    chainId: 1001,
    type: "eip1559",
    nonce,
    to: TO,
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: 50_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  }) as const;

async function sendRaw(id: number, raw: Hex): Promise<void> {
  const { text } = await post(anvil, "/", {
    jsonrpc: "2.0",
    id,
    method: "eth_sendRawTransaction",
    params: [raw],
  });
  if (!text.includes('"result"')) throw new Error(`direct send failed: ${text}`);
}

/** The ceiling: transactions signed before the clock starts, then sent straight to anvil. */
async function directRound() {
  const account = await fundedAccount();
  const raws: Hex[] = [];
  for (let nonce = 0; nonce < COUNT; nonce++) raws.push(await account.signTransaction(transfer(nonce)));
  return drive(account.address, COUNT, CONCURRENCY, (i) => sendRaw(i, raws[i]!));
}

/** A client that signs each transaction in its loop, then sends it: what any signer must at least pay. */
async function directSignRound() {
  const account = await fundedAccount();
  let nonce = 0;
  return drive(account.address, COUNT, CONCURRENCY, async (i) =>
    sendRaw(i, await account.signTransaction(transfer(nonce++))),
  );
}

let gatewayRounds = 0;

async function gatewayRound() {
  const { text } = await post(gateway, "/wallet", {
    type: "KEYSTORE_V3",
    password: "bench",
    address_quantity: 1,
  });
  const { id: walletId, address } = (JSON.parse(text) as { id: string; address: string }[])[0]!;
  // chaingate in front of a plain node has no devnet funder: fund through the node.
  await post(anvil, "/", {
    jsonrpc: "2.0",
    id: 1,
    method: "anvil_setBalance",
    params: [address, `0x${parseEther("1000").toString(16)}`],
  });
  gatewayRounds++;
  const expected = gatewayRounds * COUNT;
  return drive(
    address,
    COUNT,
    CONCURRENCY,
    async (i) => {
      const { status, text: answer } = await post(gateway, "/transaction", {
        wallet_id: walletId,
        password: "bench",
        transaction: { to: TO, value: String(i + 1) },
      });
      if (status !== 200) throw new Error(`POST /transaction failed: ${answer}`);
    },
    async () => (await confirmedRecords()) >= expected,
  );
}

try {
  const direct: Awaited<ReturnType<typeof drive>>[] = [];
  const directSigned: Awaited<ReturnType<typeof drive>>[] = [];
  const viaGateway: Awaited<ReturnType<typeof drive>>[] = [];
  // BENCH_ONLY=chaingate skips the baselines (for profiling the gateway's own path).
  const only = process.env.BENCH_ONLY;
  for (let r = 0; r < ROUNDS; r++) {
    if (only !== "chaingate") {
      direct.push(await directRound());
      directSigned.push(await directSignRound());
    }
    viaGateway.push(await gatewayRound());
  }
  const ms = (x: number) => round(x, 3);
  if (only === "chaingate") {
    console.log(
      "chaingate tx/s per round:",
      viaGateway.map((d) => round(d.rps)),
      "chaingate CPU ms/tx:",
      viaGateway.map((d) => ms(d.gatewayCpuMsPerRequest)),
      "anvil CPU ms/tx:",
      viaGateway.map((d) => ms(d.anvilCpuMsPerRequest)),
      "all mined and confirmed:",
      viaGateway.map((d) => d.allMined),
    );
  } else {
    const best = (xs: { rps: number }[]) => Math.max(...xs.map((x) => x.rps));
    const least = (
      xs: Awaited<ReturnType<typeof drive>>[],
      f: (d: Awaited<ReturnType<typeof drive>>) => number,
    ) => ms(Math.min(...xs.map(f)));
    const results = {
      when: new Date().toISOString(),
      node: BLOCK_TIME > 0 ? `anvil --block-time ${BLOCK_TIME}` : "anvil, automine (stalls under bursts)",
      transactions_per_round: COUNT,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      direct_raw_send_tx_per_s: round(best(direct)),
      chaingate_post_transaction_tx_per_s: round(best(viaGateway)),
      ratio_chaingate_vs_direct: round(best(viaGateway) / best(direct), 3),
      target_ratio_vs_direct: 0.5,
      direct_sign_then_send_tx_per_s: round(best(directSigned)),
      ratio_chaingate_vs_sign_then_send: round(best(viaGateway) / best(directSigned), 3),
      target_ratio_vs_sign_then_send: 1.0,
      direct_p50_ms: round(Math.min(...direct.map((d) => d.p50))),
      chaingate_p50_ms: round(Math.min(...viaGateway.map((d) => d.p50))),
      chaingate_p99_ms: round(Math.min(...viaGateway.map((d) => d.p99))),
      // CPU per transaction of each process, in its best round.
      cpu_ms_per_tx_chaingate: least(viaGateway, (d) => d.gatewayCpuMsPerRequest),
      target_cpu_ms_per_tx_chaingate: 0.3,
      cpu_ms_per_tx_anvil_via_chaingate: least(viaGateway, (d) => d.anvilCpuMsPerRequest),
      cpu_ms_per_tx_anvil_direct: least(direct, (d) => d.anvilCpuMsPerRequest),
      cpu_ms_per_tx_anvil_sign_then_send: least(directSigned, (d) => d.anvilCpuMsPerRequest),
      cpu_ms_per_tx_client_via_chaingate: least(viaGateway, (d) => d.cpuMsPerRequest),
      cpu_ms_per_tx_client_direct: least(direct, (d) => d.cpuMsPerRequest),
      cpu_ms_per_tx_client_sign_then_send: least(directSigned, (d) => d.cpuMsPerRequest),
      // Every round's transactions mined (chaingate's also recorded confirmed) before the next round.
      all_mined: [...direct, ...directSigned, ...viaGateway].every((d) => d.allMined),
      rounds_detail: {
        direct: direct.map((d) => round(d.rps)),
        direct_signing: directSigned.map((d) => round(d.rps)),
        chaingate: viaGateway.map((d) => round(d.rps)),
        mined_tx_per_s: {
          direct: direct.map((d) => round(d.minedRps)),
          direct_signing: directSigned.map((d) => round(d.minedRps)),
          chaingate: viaGateway.map((d) => round(d.minedRps)),
        },
        blocks: {
          direct: direct.map((d) => d.blocks),
          direct_signing: directSigned.map((d) => d.blocks),
          chaingate: viaGateway.map((d) => d.blocks),
        },
        chaingate_cpu_ms_per_tx: viaGateway.map((d) => ms(d.gatewayCpuMsPerRequest)),
        anvil_cpu_ms_per_tx_via_chaingate: viaGateway.map((d) => ms(d.anvilCpuMsPerRequest)),
      },
    };
    console.table(Object.fromEntries(Object.entries(results).filter(([k]) => k !== "rounds_detail")));
    console.log("per round (tx/s):", JSON.stringify(results.rounds_detail));
    mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
    const file = new URL(
      `./results/transactions-${results.when.replace(/[:.]/g, "-")}.json`,
      import.meta.url,
    );
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`written to ${file.pathname}`);
  }
} finally {
  await anvil.close();
  await gateway.close();
  await Promise.all(
    started.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve(undefined);
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}
