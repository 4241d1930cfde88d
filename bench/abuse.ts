/**
 * Replays the hostile-tenant attacks against chaingate in its own process (embedded default, API
 * keys on): for each attack, chaingate's peak resident memory and the latency a second tenant sees
 * meanwhile, beside that tenant's latency at rest. Loopback only; every loop is bounded.
 * Run: npm run bench:abuse   (writes bench/results/abuse-<timestamp>.json)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { LOG_FLOOD_INIT_CODE } from "../src/test-support/abuse-helpers.js";
import { DEV_ACCOUNT } from "../src/test-support/evm-fixtures.js";
import { MAIN, startChaingateProcess } from "./chaingate-process.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-abuse-"));
const cli = (args: string[]) =>
  JSON.parse(execFileSync(process.execPath, [MAIN, ...args, "--data-dir", dir], { encoding: "utf8" })) as {
    id: string;
    key: string;
  };
const attacker = cli(["keys", "create", "--role", "user", "--name", "attacker"]);
const victim = cli(["keys", "create", "--role", "user", "--name", "victim"]);

const { child, url } = await startChaingateProcess({
  CHAINGATE_DATA_DIR: dir,
  CHAINGATE_LOG_REQUESTS: "false",
  // The log flood is sent from anvil's own funded account.
  CHAINGATE_DEVNET_NODE_ACCOUNTS: "true",
  CHAINGATE_MAX_ANSWER_MB_PER_SECOND: process.env.BENCH_ANSWER_MB ?? "16",
});

const rssMb = () => {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
};

async function post(path: string, body: unknown, key: string) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text };
}
const rpc = (method: string, params: unknown[], key: string) =>
  post("/", { jsonrpc: "2.0", id: 1, method, params }, key).then(
    (a) => JSON.parse(a.text) as { result?: unknown; error?: { message: string } },
  );

/** The victim's forwarded reads (a new address each time, so no cache), one after another. */
function probe() {
  const latencies: number[] = [];
  let stop = false;
  const done = (async () => {
    for (let i = 0; !stop && i < 100_000; i++) {
      const address = `0x${(Date.now() * 1000 + i).toString(16).padStart(40, "0").slice(-40)}`;
      const t = performance.now();
      await rpc("eth_getBalance", [address, "latest"], victim.key);
      latencies.push(performance.now() - t);
    }
  })();
  return async () => {
    stop = true;
    await done;
    const sorted = [...latencies].sort((a, b) => a - b);
    const at = (q: number) =>
      Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
    return { calls: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1) };
  };
}

interface Row {
  attack: string;
  outcome: string;
  peak_rss_mb: number;
  victim: { calls: number; p50_ms: number; p99_ms: number; max_ms: number };
}
const rows: Row[] = [];

async function measure(attack: string, run: () => Promise<string>): Promise<void> {
  let peak = rssMb();
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb());
  }, 50);
  const stopProbe = probe();
  const outcome = await run();
  const victimLatency = await stopProbe();
  clearInterval(sampler);
  rows.push({ attack, outcome, peak_rss_mb: Math.max(peak, rssMb()), victim: victimLatency });
}

function socket(key: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace("http", "ws"), [`bearer.${key}`, "chaingate"]);
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => reject(new Error(String(res.statusCode))));
    ws.once("error", reject);
  });
}
function wsCall(
  ws: WebSocket,
  method: string,
  params: unknown[],
): Promise<{ result?: unknown; error?: unknown }> {
  return new Promise((resolve) => {
    const id = Math.floor(Math.random() * 1e9);
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { id?: number };
      if (message.id === id) {
        ws.off("message", onMessage);
        resolve(message as { result?: unknown; error?: unknown });
      }
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  });
}

try {
  await measure("at rest (baseline)", async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    return "no attack";
  });

  // 20,480 logs on the chain, then a batch of 50 full-range eth_getLogs.
  const deployed = await rpc(
    "eth_sendTransaction",
    [{ from: DEV_ACCOUNT, data: LOG_FLOOD_INIT_CODE }],
    attacker.key,
  );
  if (typeof deployed.result !== "string") throw new Error(`deploy failed: ${JSON.stringify(deployed)}`);
  let receipt: { contractAddress: string } | undefined;
  for (let i = 0; i < 100 && !receipt; i++) {
    receipt = (await rpc("eth_getTransactionReceipt", [deployed.result], attacker.key))
      .result as typeof receipt;
    if (!receipt) await new Promise((r) => setTimeout(r, 100));
  }
  if (!receipt) throw new Error("the flood contract was not mined");
  for (let i = 0; i < 20; i++)
    await rpc(
      "eth_sendTransaction",
      [{ from: DEV_ACCOUNT, to: receipt.contractAddress, gas: "0x1e8480" }],
      attacker.key,
    );
  await measure("batch of 50 full-range eth_getLogs over 20,480 logs", async () => {
    const batch = Array.from({ length: 50 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "eth_getLogs",
      params: [{ fromBlock: "0x0", toBlock: "latest" }],
    }));
    const answer = await post("/", batch, attacker.key);
    const errors = (JSON.parse(answer.text) as { error?: unknown }[]).filter((a) => a.error).length;
    return `${answer.text.length} bytes answered; ${errors} of 50 refused with -32005`;
  });

  // What a tenant can make chaingate hold with calls that are each within the caps: 8 KB batches of
  // eth_getLogs over at most 9 flood blocks (9,216 logs) each, every call distinct (no cache, no
  // sharing), four batches at once.
  // The 20 flood transactions were mined one a block (automine), the last at the head.
  const head = Number((await rpc("eth_blockNumber", [], attacker.key)).result);
  const floodStart = head - 19;
  const logBatch = (seed: number) => {
    const batch: unknown[] = [];
    for (let i = 0; JSON.stringify(batch).length < 8_000; i++) {
      const from = floodStart + (i % 12);
      batch.push({
        jsonrpc: "2.0",
        id: i,
        method: "eth_getLogs",
        params: [
          {
            address: receipt.contractAddress,
            fromBlock: `0x${from.toString(16)}`,
            toBlock: `0x${(from + 8).toString(16)}`,
            topics: [
              [`0x${"ab".padStart(64, "0")}`, `0x${(seed * 1000 + i).toString(16).padStart(64, "0")}`],
            ],
          },
        ],
      });
    }
    return batch;
  };
  await measure("4 concurrent 8 KB batches of eth_getLogs, each call within the caps", async () => {
    const answers = await Promise.all([1, 2, 3, 4].map((seed) => post("/", logBatch(seed), attacker.key)));
    const bytes = answers.reduce((sum, a) => sum + a.text.length, 0);
    const parsed = answers.flatMap((a) => JSON.parse(a.text) as { error?: { data?: { code?: string } } }[]);
    const refused = parsed.filter((a) => a.error).length;
    return `${logBatch(1).length} calls a batch; ${Math.round(bytes / 1_048_576)} MiB answered in all; ${refused} of ${parsed.length} calls refused (${[...new Set(parsed.flatMap((a) => (a.error?.data?.code ? [a.error.data.code] : [])))].join(", ")})`;
  });

  // The same batches sent again and again for 5 s: what a sustained flood costs the other tenant.
  await measure("the same 4 batches again and again for 5 s", async () => {
    const until = Date.now() + 5_000;
    let answered = 0;
    let refused = 0;
    let bytes = 0;
    await Promise.all(
      [1, 2, 3, 4].map(async (seed) => {
        for (let round = 0; Date.now() < until; round++) {
          const answer = await post("/", logBatch(seed * 100 + round), attacker.key);
          bytes += answer.text.length;
          for (const call of JSON.parse(answer.text) as { error?: unknown }[])
            if (call.error) refused++;
            else answered++;
        }
      }),
    );
    return `${answered} calls answered (${Math.round(bytes / 1_048_576)} MiB), ${refused} refused`;
  });

  await measure("10,000 filters from one key", async () => {
    let held = 0;
    let refused = "";
    for (let round = 0; round < 100 && !refused; round++) {
      const batch = Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "eth_newBlockFilter",
      }));
      const answers = JSON.parse((await post("/", batch, attacker.key)).text) as {
        result?: string;
        error?: { message: string };
      }[];
      held += answers.filter((a) => a.result).length;
      refused = answers.find((a) => a.error)?.error?.message ?? "";
    }
    return `${held} held, then: ${refused.slice(0, 60)}`;
  });

  const sockets: WebSocket[] = [];
  await measure("4,000 subscriptions from one key, then every socket dropped", async () => {
    let held = 0;
    let refused = "";
    for (let s = 0; s < 40 && !refused; s++) {
      const ws = await socket(attacker.key).catch((e: Error) => {
        refused = `socket refused (HTTP ${e.message})`;
        return undefined;
      });
      if (!ws) break;
      sockets.push(ws);
      for (let i = 0; i < 100 && !refused; i++) {
        const answer = await wsCall(ws, "eth_subscribe", ["newHeads"]);
        if (answer.error) refused = JSON.stringify(answer.error).slice(0, 60);
        else held++;
      }
    }
    for (const ws of sockets) ws.terminate();
    await new Promise((r) => setTimeout(r, 500));
    return `${held} held, then: ${refused}`;
  });

  const wallet = JSON.parse(
    (await post("/wallet", { type: "KEYSTORE_V3", password: "attacker", address_quantity: 1 }, attacker.key))
      .text,
  ) as { id: string }[];
  let alone = 0;
  await measure("victim's wallet creation alone (standard KDF)", async () => {
    const t = performance.now();
    await post("/wallet", { type: "KEYSTORE_V3", password: "victim", address_quantity: 1 }, victim.key);
    alone = performance.now() - t;
    return `${Math.round(alone)} ms`;
  });
  await measure("30 concurrent wrong passwords, victim creates a wallet meanwhile", async () => {
    const guesses = Array.from({ length: 30 }, (_, i) =>
      post(
        "/transaction",
        { wallet_id: wallet[0]!.id, password: `guess-${i}`, transaction: { to: DEV_ACCOUNT, value: "1" } },
        attacker.key,
      ),
    );
    const t = performance.now();
    await post("/wallet", { type: "KEYSTORE_V3", password: "victim", address_quantity: 1 }, victim.key);
    const during = performance.now() - t;
    const answers = await Promise.all(guesses);
    const tried = answers.filter((a) => a.text.includes("WRONG_PASSWORD")).length;
    return `${tried} of 30 tried; victim's creation ${Math.round(during)} ms (${(during / alone).toFixed(2)}x alone)`;
  });

  await measure("revocation of a key with an open WebSocket", async () => {
    const ws = await socket(attacker.key);
    const closed = new Promise<number>((resolve) => ws.once("close", () => resolve(performance.now())));
    cli(["keys", "revoke", attacker.id]);
    // From the moment the revocation is in the store (the CLI's own start-up is not counted).
    const t = performance.now();
    const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
    return at < 0 ? "still open after 10 s" : `closed ${Math.round(at - t)} ms after revocation`;
  });
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
}

console.table(
  rows.map((r) => ({
    attack: r.attack,
    outcome: r.outcome,
    "peak RSS MB": r.peak_rss_mb,
    "victim p50 ms": r.victim.p50_ms,
    "victim p99 ms": r.victim.p99_ms,
    "victim max ms": r.victim.max_ms,
    "victim p50 vs rest":
      rows[0]!.victim.p50_ms > 0 ? (r.victim.p50_ms / rows[0]!.victim.p50_ms).toFixed(2) : "-",
  })),
);
const resultsDir = new URL("./results/", import.meta.url).pathname;
mkdirSync(resultsDir, { recursive: true });
const file = join(
  resultsDir,
  `abuse-${new Date().toISOString().replaceAll(":", "-").replace(".", "-")}.json`,
);
writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
console.log(`written to ${file}`);
rmSync(dir, { recursive: true, force: true });
