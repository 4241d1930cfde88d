/**
 * How close any custody send can come to sign-then-send on this machine: the floor (bench/
 * send-floor-server.ts: native signing checked, one durable SQLite row before the broadcast, one
 * send, the answer; nothing else) against a client that signs with viem and sends the raw bytes to
 * the same node, in alternating rounds (A B, B A, ...) as bench/transactions.ts runs chaingate.
 * Where the floor itself is past one of #42's bounds, no service that records before it
 * broadcasts can meet that bound here, whatever it does beside. Each round ends when its
 * transactions are mined. The CPU per transaction of each process is read from /proc.
 *
 * Run: npm run bench:send-floor
 *   BENCH_TX_COUNT (per round, 400), BENCH_CONCURRENCY (1; 32 for a burst), BENCH_ROUNDS (6),
 *   BENCH_WARMUP (uncounted rounds of each side first, 2), DATABASE_URL (a fresh PostgreSQL database:
 *   the floor records there instead of in SQLite).
 * Writes bench/results/send-floor-<timestamp>.json.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { type Hex, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startPlainAnvil } from "./bench-anvil.js";
import { percentile, processCpuSeconds, spread } from "./bench-stats.js";
import { BENCH_TO, benchTransfer, stopProcesses } from "./bench-transfer.js";

const COUNT = Number(process.env.BENCH_TX_COUNT ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const MINED_DEADLINE_MS = 90_000;
const DATABASE_URL = process.env.DATABASE_URL;

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-floor-"));
const started: ChildProcess[] = [];

function startFloor(nodeUrl: string, key: Hex): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      new URL("./send-floor-server.ts", import.meta.url).pathname,
      nodeUrl,
      key,
      dir,
      ...(DATABASE_URL ? [DATABASE_URL] : []),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  started.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /send floor at (\S+)/.exec(chunk.toString());
      if (match) resolve({ child, url: match[1]! });
    });
    child.once("exit", (code) => reject(new Error(`the floor server exited with ${code}`)));
  });
}

interface Round {
  rps: number;
  p50: number;
  /** CPU per transaction while the requests ran: the serving process (the floor; none for B), anvil, this client. */
  serverCpuMs: number;
  anvilCpuMs: number;
  clientCpuMs: number;
  allMined: boolean;
}

try {
  const plain = await startPlainAnvil(started, ["--block-time", "1"]);
  const node = new Pool(plain.url, { connections: CONCURRENCY + 2 });
  const call = async (method: string, params: unknown[]) => {
    const response = await node.request({
      path: "/",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return JSON.parse(await response.body.text()) as { result?: unknown; error?: unknown };
  };
  const direct = privateKeyToAccount(generatePrivateKey());
  const floorKey = generatePrivateKey();
  const floorAddress = privateKeyToAccount(floorKey).address;
  for (const address of [direct.address, floorAddress])
    await call("anvil_setBalance", [address, `0x${parseEther("1000").toString(16)}`]);
  const floorProcess = await startFloor(plain.url, floorKey);
  const floor = new Pool(floorProcess.url, { connections: CONCURRENCY + 2 });
  const mined = async (address: string) =>
    Number(BigInt((await call("eth_getTransactionCount", [address, "latest"])).result as string));

  /** COUNT requests, CONCURRENCY in flight, then waits until they are mined. */
  async function drive(
    address: string,
    serverPid: number | undefined,
    one: () => Promise<void>,
  ): Promise<Round> {
    const latencies: number[] = [];
    const before = await mined(address);
    let next = 0;
    const client = process.cpuUsage();
    const anvilCpu = processCpuSeconds(plain.child.pid!);
    const serverCpu = serverPid === undefined ? 0 : processCpuSeconds(serverPid);
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < COUNT) {
          const t = performance.now();
          await one();
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(client);
    const perTx = (cpuSeconds: number) => (cpuSeconds * 1000) / COUNT;
    const round: Round = {
      rps: COUNT / seconds,
      p50: percentile(latencies, 50),
      serverCpuMs: serverPid === undefined ? 0 : perTx(processCpuSeconds(serverPid) - serverCpu),
      anvilCpuMs: perTx(processCpuSeconds(plain.child.pid!) - anvilCpu),
      clientCpuMs: (used.user + used.system) / 1000 / COUNT,
      allMined: false,
    };
    const deadline = performance.now() + MINED_DEADLINE_MS;
    while ((await mined(address)) - before < COUNT && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    round.allMined = (await mined(address)) - before >= COUNT;
    return round;
  }

  let directNonce = 0;
  const signThenSend = () =>
    drive(direct.address, undefined, async () => {
      const raw = await direct.signTransaction(benchTransfer(directNonce++));
      const answer = await call("eth_sendRawTransaction", [raw]);
      if (answer.result === undefined) throw new Error(`direct send failed: ${JSON.stringify(answer)}`);
    });
  const floorSends = () =>
    drive(floorAddress, floorProcess.child.pid!, async () => {
      const response = await floor.request({
        path: "/",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"to":"${BENCH_TO}","value":"1"}`,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`floor send failed: ${text}`);
    });

  for (let i = 0; i < WARMUP; i++) {
    await floorSends();
    await signThenSend();
  }
  const a: Round[] = [];
  const b: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      a.push(await floorSends());
      b.push(await signThenSend());
    } else {
      b.push(await signThenSend());
      a.push(await floorSends());
    }
  }
  const results = {
    when: new Date().toISOString(),
    commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
    node: "anvil --block-time 1",
    store: DATABASE_URL ? "postgres" : "sqlite",
    transactions_per_round: COUNT,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    warmup_rounds: WARMUP,
    /** A / B per round: the floor's rate over sign-then-send's. */
    ratio_rate_floor_vs_sign_then_send: spread(a.map((x, i) => x.rps / b[i]!.rps)),
    /** A / B per round: the floor's p50 latency over sign-then-send's. */
    ratio_p50_floor_vs_sign_then_send: spread(a.map((x, i) => x.p50 / b[i]!.p50)),
    floor_p50_ms: spread(a.map((x) => x.p50)),
    sign_then_send_p50_ms: spread(b.map((x) => x.p50)),
    floor_tx_per_s: spread(a.map((x) => x.rps)),
    sign_then_send_tx_per_s: spread(b.map((x) => x.rps)),
    floor_server_cpu_ms_per_tx: spread(a.map((x) => x.serverCpuMs)),
    client_cpu_ms_per_tx: {
      floor: spread(a.map((x) => x.clientCpuMs)),
      sign_then_send: spread(b.map((x) => x.clientCpuMs)),
    },
    anvil_cpu_ms_per_tx: {
      floor: spread(a.map((x) => x.anvilCpuMs)),
      sign_then_send: spread(b.map((x) => x.anvilCpuMs)),
    },
    all_mined: [...a, ...b].every((x) => x.allMined),
  };
  console.log(JSON.stringify(results, null, 2));
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  const file = new URL(`./results/send-floor-${results.when.replace(/[:.]/g, "-")}.json`, import.meta.url);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written to ${file.pathname}`);
  await node.close();
  await floor.close();
} finally {
  await stopProcesses(started);
  rmSync(dir, { recursive: true, force: true });
}
