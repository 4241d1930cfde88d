/**
 * POST /transaction against a client that signs with its own key and sends the raw bytes to the
 * same node (sign-then-send), side by side in one run: rounds alternate A and B (ABBA), and each
 * round's ratio is reported with the min, median and max over rounds (this machine is shared and
 * noisy: ratios, never absolute rates). chaingate runs built, as its own process with `npm start`'s
 * flags and defaults (request log on; only the signing rate limit is off, which a burst would meet),
 * in front of a bare anvil, on SQLite or, with DATABASE_URL, on PostgreSQL. CPU per transaction is
 * read from /proc for chaingate (while the requests run, and until they are confirmed) and, on
 * PostgreSQL, for its backends apart.
 *
 * The node makes a block every BENCH_BLOCK_TIME seconds (default 1), as a real chain does. Under
 * automine anvil 1.7 leaves most of a burst's ready transactions unmined and spins a core on them
 * (foundry-rs/foundry#10122). Each round ends when its transactions are all mined (chaingate's also
 * confirmed in its records), so no round leaves work for the next.
 *
 * Run: npm run bench:transactions
 *   BENCH_TX_COUNT (per round, 1000), BENCH_CONCURRENCY (32; 1 for latency), BENCH_ROUNDS (4),
 *   BENCH_ADDRESSES (1; 16 spreads the load over 16 addresses on both sides), DATABASE_URL,
 *   BENCH_ONLY=chaingate (chaingate rounds only, for profiling with BENCH_GATEWAY_NODE_ARGS),
 *   BENCH_WARMUP (uncounted rounds of each side first, 2), BENCH_HISTORY (confirmed transactions
 *   recorded in each chaingate's store before the rounds, 0),
 *   BENCH_VERSUS=<another checkout's dist/main.js>: B is that build's POST /transaction instead of
 *   sign-then-send (two builds side by side in one run; on PostgreSQL BENCH_VERSUS_DATABASE_URL,
 *   a second fresh database, is its store); BENCH_VERSUS_NODE_ARGS: Node flags for B alone (with
 *   BENCH_VERSUS=dist/main.js, this build against itself under other flags).
 * Writes bench/results/transactions-<timestamp>.json.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { parseEther } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { startGatewayProcess, startPlainAnvil } from "./bench-anvil.js";
import { percentile, processCpuSeconds, round, spread } from "./bench-stats.js";
import { BENCH_TO, benchTransfer, post, stopProcesses } from "./bench-transfer.js";
import { recordHistory } from "./store-history.js";

const COUNT = Number(process.env.BENCH_TX_COUNT ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ADDRESSES = Number(process.env.BENCH_ADDRESSES ?? 1);
const ONLY = process.env.BENCH_ONLY;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);

const BLOCK_TIME = Number(process.env.BENCH_BLOCK_TIME ?? 1);
/** How long a round may wait for its transactions to be mined before it is reported as not mined. */
const MINED_DEADLINE_MS = 90_000;
const DATABASE_URL = process.env.DATABASE_URL;
const VERSUS = process.env.BENCH_VERSUS;
const VERSUS_DATABASE_URL = process.env.BENCH_VERSUS_DATABASE_URL;
/** Node flags for B alone (after `npm start`'s, so a repeated flag is B's): the same build with other flags. */
const VERSUS_NODE_ARGS = (process.env.BENCH_VERSUS_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
if (VERSUS !== undefined && DATABASE_URL !== undefined && VERSUS_DATABASE_URL === undefined)
  throw new Error("BENCH_VERSUS on PostgreSQL needs BENCH_VERSUS_DATABASE_URL (a second fresh database)");
/**
 * BENCH_HISTORY: confirmed transactions recorded in each chaingate's store before the first round
 * (0): a store as a custody service holds it after months, where an index a send writes at a random
 * place costs a page read and a page written a send (decision 204).
 */
const HISTORY = Number(process.env.BENCH_HISTORY ?? 0);
/** What B is, in the results' keys. */
const B = VERSUS === undefined ? "sign_then_send" : "other_build";

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-tx-"));
const started: ChildProcess[] = [];

/** Ends every process this bench started: at the end, and when one of them could not start. */
const stopStarted = () => stopProcesses(started);

/** anvil, this build, and the other build (BENCH_VERSUS); a failed start ends those already started. */
async function startAll() {
  try {
    const plain = await startPlainAnvil(started, BLOCK_TIME > 0 ? ["--block-time", String(BLOCK_TIME)] : []);
    // The password KDF is not what is measured (wallets are made before the clock starts).
    process.env.CHAINGATE_KDF = "light";
    process.env.CHAINGATE_RATE_SIGN = "0";
    const gatewayProcess = await startGatewayProcess(plain.url, join(dir, "data"), started, {
      CHAINGATE_LOG_REQUESTS: "true",
    });
    // Two builds compared: the other one in its own process, on its own store.
    const otherProcess =
      VERSUS === undefined
        ? undefined
        : await startGatewayProcess(
            plain.url,
            join(dir, "data-other"),
            started,
            {
              CHAINGATE_LOG_REQUESTS: "true",
              ...(VERSUS_DATABASE_URL === undefined ? {} : { DATABASE_URL: VERSUS_DATABASE_URL }),
            },
            VERSUS,
            VERSUS_NODE_ARGS,
          );
    return { plain, gatewayProcess, otherProcess };
  } catch (error) {
    await stopStarted();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
const { plain, gatewayProcess, otherProcess } = await startAll();
const pids = {
  chaingate: gatewayProcess.child.pid!,
  anvil: plain.child.pid!,
  other: otherProcess?.child.pid,
};

/** PostgreSQL backends serving chaingate's database: their CPU is the store's, reported apart. */
function backendPids(): number[] {
  if (!DATABASE_URL) return [];
  const database = new URL(DATABASE_URL).pathname.slice(1);
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmd.startsWith("postgres:") && cmd.includes(` ${database} `)) out.push(Number(entry));
    } catch {}
  }
  return out;
}

/**
 * The backends' CPU over a span: each backend's own growth, read every 100 ms. A sum over the
 * backends alive at the start and at the end lost what a backend used before it exited in between
 * (the pool closes idle connections), and once read below zero.
 */
function backendsCpuSpan(): { stop(): number } {
  const base = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = (first: boolean) => {
    for (const pid of backendPids()) {
      const cpu = processCpuSeconds(pid);
      // A live process's CPU only grows: a lower read is a backend that exited after the listing.
      if (cpu < (last.get(pid) ?? 0)) continue;
      // A backend that appears later started during the span: all its CPU is the span's.
      if (!base.has(pid)) base.set(pid, first ? cpu : 0);
      last.set(pid, cpu);
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), 100);
  return {
    stop() {
      clearInterval(timer);
      sample(false);
      let sum = 0;
      for (const [pid, cpu] of last) sum += cpu - base.get(pid)!;
      return sum;
    },
  };
}

const anvil = new Pool(new URL(plain.url).origin, { connections: CONCURRENCY + 2 });
const gateway = new Pool(new URL(gatewayProcess.url).origin, { connections: CONCURRENCY + 2 });
const other =
  otherProcess === undefined
    ? undefined
    : new Pool(new URL(otherProcess.url).origin, { connections: CONCURRENCY + 2 });

async function nodeCall(method: string, params: unknown[]): Promise<unknown> {
  const { text } = await post(anvil, "/", { jsonrpc: "2.0", id: 1, method, params });
  return (JSON.parse(text) as { result: unknown }).result;
}
/** Transactions of `addresses` in the latest block: how many of a round's are mined. */
async function minedCount(addresses: string[]): Promise<number> {
  const counts = await Promise.all(addresses.map((a) => nodeCall("eth_getTransactionCount", [a, "latest"])));
  return counts.reduce<number>((sum, c) => sum + Number(BigInt(c as string)), 0);
}
/** chaingate's records in `confirmed`, from its own gauge (all rounds so far). */
async function confirmedRecords(pool: Pool): Promise<number> {
  const response = await pool.request({ path: "/metrics", method: "GET" });
  const line = /^chaingate_transactions\{state="confirmed"\} (\d+)/m.exec(await response.body.text());
  return line ? Number(line[1]) : 0;
}
const fund = (address: string) =>
  nodeCall("anvil_setBalance", [address, `0x${parseEther("1000").toString(16)}`]);

interface Round {
  rps: number;
  p50: number;
  p99: number;
  allMined: boolean;
  /** chaingate's process CPU per transaction while the requests ran, and until all were confirmed. */
  gatewayBurstCpuMs: number;
  gatewayCpuMs: number;
  backendsBurstCpuMs: number;
  anvilCpuMs: number;
  /** The node's CPU per transaction while the requests ran. */
  anvilBurstCpuMs: number;
  clientCpuMs: number;
}

/**
 * Runs COUNT requests, CONCURRENCY in flight, then waits until `addresses` have all of them mined
 * and `settled()` holds.
 */
async function drive(
  addresses: string[],
  one: (i: number) => Promise<void>,
  settled = async () => true,
  /** The chaingate process whose CPU is read (B's when two builds are compared). */
  gatewayPid = pids.chaingate,
): Promise<Round> {
  const latencies: number[] = [];
  const before = await minedCount(addresses);
  let next = 0;
  const start = performance.now();
  const client = process.cpuUsage();
  const anvilCpu = processCpuSeconds(pids.anvil);
  const gatewayCpu = processCpuSeconds(gatewayPid);
  const backends = backendsCpuSpan();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT) {
        const i = next++;
        const t = performance.now();
        await one(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(client);
  const gatewayBurst = processCpuSeconds(gatewayPid) - gatewayCpu;
  const anvilBurst = processCpuSeconds(pids.anvil) - anvilCpu;
  const backendsBurst = backends.stop();
  const deadline = performance.now() + MINED_DEADLINE_MS;
  let mined = (await minedCount(addresses)) - before;
  while (mined < COUNT && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    mined = (await minedCount(addresses)) - before;
  }
  let done = await settled();
  while (!done && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    done = await settled();
  }
  const perTx = (cpuSeconds: number) => (cpuSeconds * 1000) / COUNT;
  return {
    rps: COUNT / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    allMined: mined >= COUNT && done,
    gatewayBurstCpuMs: perTx(gatewayBurst),
    gatewayCpuMs: perTx(processCpuSeconds(gatewayPid) - gatewayCpu),
    backendsBurstCpuMs: perTx(backendsBurst),
    anvilCpuMs: perTx(processCpuSeconds(pids.anvil) - anvilCpu),
    anvilBurstCpuMs: perTx(anvilBurst),
    clientCpuMs: (used.user + used.system) / 1000 / COUNT,
  };
}

/** B: a client that signs each transaction with its own key in its loop, then sends the raw bytes. */
async function signThenSendRound(): Promise<Round> {
  const accounts: PrivateKeyAccount[] = Array.from({ length: ADDRESSES }, () =>
    privateKeyToAccount(generatePrivateKey()),
  );
  await Promise.all(accounts.map((a) => fund(a.address)));
  const nonces = accounts.map(() => 0);
  return drive(
    accounts.map((a) => a.address),
    async (i) => {
      const k = i % ADDRESSES;
      const raw = await accounts[k]!.signTransaction(benchTransfer(nonces[k]!++));
      const { text } = await post(anvil, "/", {
        jsonrpc: "2.0",
        id: i,
        method: "eth_sendRawTransaction",
        params: [raw],
      });
      if (!text.includes('"result"')) throw new Error(`direct send failed: ${text}`);
    },
  );
}

/** Transactions each chaingate has been sent so far: a round ends when its gauge counts them confirmed. */
const sentTo = new Map<Pool, number>();
if (HISTORY > 0) {
  // The bench's chain is 1001; the rows count as confirmed in each chaingate's gauge from the start.
  const started = performance.now();
  const stores: [Pool, Parameters<typeof recordHistory>[0]][] = [
    [
      gateway,
      DATABASE_URL
        ? { kind: "postgres", url: DATABASE_URL }
        : { kind: "sqlite", path: join(dir, "data", "chaingate.sqlite") },
    ],
  ];
  if (other !== undefined)
    stores.push([
      other,
      VERSUS_DATABASE_URL
        ? { kind: "postgres", url: VERSUS_DATABASE_URL }
        : { kind: "sqlite", path: join(dir, "data-other", "chaingate.sqlite") },
    ]);
  for (const [pool, store] of stores) {
    await recordHistory(store, 1001, HISTORY);
    sentTo.set(pool, HISTORY);
  }
  console.log(
    `recorded ${HISTORY} transactions of history in each store (${Math.round(performance.now() - started)} ms)`,
  );
}
/**
 * A: POST /transaction from a custody wallet with ADDRESSES addresses (made before the clock starts),
 * to this build's chaingate or (B, comparing builds) the other's.
 */
async function chaingateRound(pool = gateway, pid = pids.chaingate): Promise<Round> {
  const { text } = await post(pool, "/wallet", {
    type: "KEYSTORE_V3",
    password: "bench",
    address_quantity: ADDRESSES,
  });
  const records = JSON.parse(text) as { id: string; address: string }[];
  const walletId = records[0]!.id;
  // chaingate in front of a plain node has no devnet funder: fund through the node.
  await Promise.all(records.map((r) => fund(r.address)));
  const expected = (sentTo.get(pool) ?? 0) + COUNT;
  sentTo.set(pool, expected);
  return drive(
    records.map((r) => r.address),
    async (i) => {
      const { status, text: answer } = await post(pool, "/transaction", {
        wallet_id: walletId,
        password: "bench",
        index: i % ADDRESSES,
        transaction: { to: BENCH_TO, value: String(i + 1) },
      });
      if (status !== 200) throw new Error(`POST /transaction failed: ${answer}`);
    },
    async () => (await confirmedRecords(pool)) >= expected,
    pid,
  );
}

/** A side's rounds as lists, warm-up rounds apart (results' per_round). */
function perRound(warm: readonly Round[], counted: readonly Round[]) {
  const lists = (rounds: readonly Round[]) => ({
    tx_per_s: rounds.map((x) => round(x.rps, 0)),
    p50_ms: rounds.map((x) => round(x.p50, 3)),
    /** chaingate's process (a chaingate side; sign-then-send's is its client's, below). */
    cpu_ms_per_tx_during_requests: rounds.map((x) => round(x.gatewayBurstCpuMs, 3)),
    client_cpu_ms_per_tx: rounds.map((x) => round(x.clientCpuMs, 3)),
    anvil_cpu_ms_per_tx_during_requests: rounds.map((x) => round(x.anvilBurstCpuMs, 3)),
  });
  return { warmup: lists(warm), counted: lists(counted) };
}

/** B: sign-then-send, or the other build's chaingate. */
const roundB = () =>
  other === undefined || pids.other === undefined ? signThenSendRound() : chaingateRound(other, pids.other);

try {
  // Warm-up rounds, not counted: V8 optimises the hot code over the first few thousand transactions
  // (CPU per transaction fell from 1.4 ms in the first round to 0.6-0.7 ms from the third on), and a
  // service runs warm. Each side gets its own.
  const warmA: Round[] = [];
  const warmB: Round[] = [];
  for (let w = 0; w < WARMUP; w++) {
    warmA.push(await chaingateRound());
    if (ONLY !== "chaingate") warmB.push(await roundB());
  }
  const a: Round[] = [];
  const b: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // A B, B A, A B, ...: each side runs as often first as second.
    if (ONLY === "chaingate") a.push(await chaingateRound());
    else if (r % 2 === 0) {
      a.push(await chaingateRound());
      b.push(await roundB());
    } else {
      b.push(await roundB());
      a.push(await chaingateRound());
    }
  }
  const ms = (x: number) => round(x, 3);
  if (ONLY === "chaingate") {
    console.log(
      "chaingate tx/s:",
      a.map((d) => round(d.rps, 0)),
      "CPU ms/tx during requests:",
      a.map((d) => ms(d.gatewayBurstCpuMs)),
      "until confirmed:",
      a.map((d) => ms(d.gatewayCpuMs)),
      "PostgreSQL backends ms/tx:",
      a.map((d) => ms(d.backendsBurstCpuMs)),
      "p50 ms:",
      a.map((d) => ms(d.p50)),
      "all mined and confirmed:",
      a.map((d) => d.allMined),
    );
  } else {
    const results = {
      when: new Date().toISOString(),
      commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
      store: DATABASE_URL ? "postgres" : "sqlite",
      node: BLOCK_TIME > 0 ? `anvil --block-time ${BLOCK_TIME}` : "anvil, automine",
      /** B: sign-then-send, or another build's POST /transaction (BENCH_VERSUS). */
      versus: VERSUS ?? "sign-then-send",
      ...(VERSUS_NODE_ARGS.length > 0 ? { versus_node_args: VERSUS_NODE_ARGS.join(" ") } : {}),
      transactions_per_round: COUNT,
      concurrency: CONCURRENCY,
      addresses: ADDRESSES,
      rounds: ROUNDS,
      warmup_rounds: WARMUP,
      history: HISTORY,
      /** A / B per round: POST /transaction's rate over B's. */
      [`ratio_rate_vs_${B}`]: spread(a.map((x, i) => x.rps / b[i]!.rps)),
      /** A / B per round: POST /transaction's p50 latency over B's. */
      [`ratio_p50_vs_${B}`]: spread(a.map((x, i) => x.p50 / b[i]!.p50)),
      chaingate_tx_per_s: spread(a.map((x) => x.rps)),
      [`${B}_tx_per_s`]: spread(b.map((x) => x.rps)),
      chaingate_p50_ms: spread(a.map((x) => x.p50)),
      [`${B}_p50_ms`]: spread(b.map((x) => x.p50)),
      chaingate_p99_ms: spread(a.map((x) => x.p99)),
      chaingate_cpu_ms_per_tx_during_requests: spread(a.map((x) => x.gatewayBurstCpuMs)),
      chaingate_cpu_ms_per_tx_until_confirmed: spread(a.map((x) => x.gatewayCpuMs)),
      ...(VERSUS === undefined
        ? {}
        : { other_build_cpu_ms_per_tx_during_requests: spread(b.map((x) => x.gatewayBurstCpuMs)) }),
      postgres_backends_cpu_ms_per_tx: DATABASE_URL ? spread(a.map((x) => x.backendsBurstCpuMs)) : null,
      anvil_cpu_ms_per_tx: {
        chaingate: spread(a.map((x) => x.anvilCpuMs)),
        [B]: spread(b.map((x) => x.anvilCpuMs)),
      },
      anvil_cpu_ms_per_tx_during_requests: {
        chaingate: spread(a.map((x) => x.anvilBurstCpuMs)),
        [B]: spread(b.map((x) => x.anvilBurstCpuMs)),
      },
      client_cpu_ms_per_tx: {
        chaingate: spread(a.map((x) => x.clientCpuMs)),
        [B]: spread(b.map((x) => x.clientCpuMs)),
      },
      /**
       * Each round in the order run (warm-up rounds first, apart): how a side's rate and CPU move
       * from round to round (V8's optimising compiler, the machine), which min/median/max hide.
       */
      per_round: {
        chaingate: perRound(warmA, a),
        [B]: perRound(warmB, b),
      },
      all_mined: [...warmA, ...warmB, ...a, ...b].every((x) => x.allMined),
    };
    console.log(JSON.stringify(results, null, 2));
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
  await other?.close();
  await stopStarted();
  rmSync(dir, { recursive: true, force: true });
}
