/**
 * How long the tracker takes to confirm a block full of chaingate's transactions, and the CPU it
 * spends on each (decision 220): BENCH_TX_COUNT (1,400: a 30M-gas block of transfers) sends of
 * POST /transaction at 32 connections to a node that makes no block, then one block with all of
 * them, timed until the store holds every one `confirmed` (read from the SQLite file, not through
 * chaingate). The CPU is chaingate's from /proc over that time, less what it spends idle with the
 * same transactions pending (read over the 3 s before the block). The built service with
 * `npm start`'s flags on SQLite (the tracker's pass is the same on both stores), in front of a bare
 * anvil of its own.
 *
 * Run: npm run bench:tracker-confirm
 *   BENCH_TX_COUNT (1400), BENCH_ROUNDS (4, after one warm-up round of each side),
 *   BENCH_VERSUS=<another checkout's dist/main.js>: its rounds alternate with this build's (ABBA).
 * Writes bench/results/tracker-confirm-<timestamp>.json.
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Pool } from "undici";
import { parseEther } from "viem";
import { rpc, startGatewayProcess, startPlainAnvil } from "./bench-anvil.js";
import { processCpuSeconds, round, spread } from "./bench-stats.js";
import { BENCH_TO, post, stopProcesses } from "./bench-transfer.js";

const COUNT = Number(process.env.BENCH_TX_COUNT ?? 1400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const VERSUS = process.env.BENCH_VERSUS;
const CONCURRENCY = 32;
/** How long a round may wait for its block to be confirmed before the bench gives up. */
const CONFIRM_DEADLINE_MS = 120_000;

interface Side {
  name: string;
  anvil: string;
  pid: number;
  pool: Pool;
  confirmed: () => number;
  close: () => void;
}

interface Round {
  confirm_ms: number;
  cpu_ms_per_tx: number;
  idle_cpu_ms_per_s: number;
}

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-confirm-"));
const started: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startSide(name: string, main: string | undefined): Promise<Side> {
  const plain = await startPlainAnvil(started, ["--no-mining"]);
  process.env.CHAINGATE_KDF = "light";
  process.env.CHAINGATE_RATE_SIGN = "0";
  const data = join(dir, name);
  const gateway = await startGatewayProcess(
    plain.url,
    data,
    started,
    { CHAINGATE_LOG_REQUESTS: "true" },
    main,
  );
  const db = new Database(join(data, "chaingate.sqlite"), { readonly: true, fileMustExist: true });
  const count = db.prepare("select count(*) as n from transactions where state = 'confirmed'");
  return {
    name,
    anvil: plain.url,
    pid: gateway.child.pid!,
    pool: new Pool(new URL(gateway.url).origin, { connections: CONCURRENCY + 2 }),
    confirmed: () => (count.get() as { n: number }).n,
    close: () => db.close(),
  };
}

/** A new address sends COUNT transfers, held in the node's pool; one block takes them all. */
async function confirmRound(side: Side): Promise<Round> {
  const { text } = await post(side.pool, "/wallet", {
    type: "KEYSTORE_V3",
    password: "bench",
    address_quantity: 1,
  });
  const [wallet] = JSON.parse(text) as { id: string; address: string }[];
  await rpc(side.anvil, "anvil_setBalance", [wallet!.address, `0x${parseEther("1000").toString(16)}`]);
  const before = side.confirmed();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT) {
        const i = next++;
        const sent = await post(side.pool, "/transaction", {
          wallet_id: wallet!.id,
          password: "bench",
          index: 0,
          transaction: { to: BENCH_TO, value: String(i + 1) },
        });
        if (sent.status !== 200) throw new Error(`POST /transaction failed: ${sent.text}`);
      }
    }),
  );
  // The sends' own work done (their `sent` states written), the process at rest with them pending.
  await sleep(2000);
  const idleFrom = processCpuSeconds(side.pid);
  await sleep(3000);
  const idlePerMs = (processCpuSeconds(side.pid) - idleFrom) / 3000;
  const cpuFrom = processCpuSeconds(side.pid);
  const start = performance.now();
  await rpc(side.anvil, "evm_mine", []);
  while (side.confirmed() < before + COUNT) {
    if (performance.now() - start > CONFIRM_DEADLINE_MS) throw new Error(`${side.name}: block not confirmed`);
    await sleep(10);
  }
  const ms = performance.now() - start;
  const cpu = processCpuSeconds(side.pid) - cpuFrom - idlePerMs * ms;
  return {
    confirm_ms: round(ms, 0),
    cpu_ms_per_tx: round((cpu * 1000) / COUNT),
    idle_cpu_ms_per_s: round(idlePerMs * 1e6, 1),
  };
}

const sides: Side[] = [];
try {
  sides.push(await startSide("this", undefined));
  if (VERSUS !== undefined) sides.push(await startSide("other", VERSUS));
  for (const side of sides) await confirmRound(side); // warm-up
  const rounds = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    // A B B A: each side as often first as second.
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const measured = await confirmRound(side);
      rounds.get(side.name)!.push(measured);
      console.log(side.name, JSON.stringify(measured));
    }
  }
  const summary = (list: Round[]) => ({
    confirm_ms: spread(list.map((x) => x.confirm_ms)),
    cpu_ms_per_tx: spread(list.map((x) => x.cpu_ms_per_tx)),
    idle_cpu_ms_per_s: spread(list.map((x) => x.idle_cpu_ms_per_s)),
    per_round: list,
  });
  const results = {
    when: new Date().toISOString(),
    transactions_per_block: COUNT,
    rounds: ROUNDS,
    versus: VERSUS ?? null,
    this_build: summary(rounds.get("this")!),
    ...(VERSUS === undefined ? {} : { other_build: summary(rounds.get("other")!) }),
  };
  console.log(JSON.stringify(results, null, 2));
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  const file = new URL(
    `./results/tracker-confirm-${results.when.replace(/[:.]/g, "-")}.json`,
    import.meta.url,
  ).pathname;
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written to ${file}`);
} finally {
  for (const side of sides) {
    side.close();
    await side.pool.close();
  }
  await stopProcesses(started);
  rmSync(dir, { recursive: true, force: true });
}
