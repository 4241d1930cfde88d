/**
 * Whether the heap bounds `npm start` sets leave room for the largest answers the caps allow:
 * chaingate (with the start script's node flags) in front of a node that answers eth_getLogs with
 * about 60 MB of logs, asked by 1, 2 and 4 callers at once; prints each answer's size and
 * chaingate's peak RSS, and whether it is still running.
 * Run: npm run bench:large-answers   (writes bench/results/large-answers-<timestamp>.json)
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGatewayProcess } from "./bench-anvil.js";

const LOGS = Number(process.env.BENCH_LOGS ?? 105_000);
const word = (byte: string, n = 32) => `0x${byte.repeat(n)}`;
const log = (i: number) => ({
  address: word("ab", 20),
  topics: [`0x${i.toString(16).padStart(64, "0")}`, word("cd")],
  data: word("ef", 64),
  blockNumber: "0x1",
  transactionHash: `0x${i.toString(16).padStart(64, "1")}`,
  transactionIndex: "0x0",
  blockHash: word("12"),
  logIndex: `0x${i.toString(16)}`,
  removed: false,
});
const logs = JSON.stringify(Array.from({ length: LOGS }, (_, i) => log(i)));

/** Just enough of a node for chaingate to verify it and follow its head, and the large answer. */
function answer(call: { id: unknown; method: string }): string {
  const results: Record<string, unknown> = {
    eth_chainId: "0x3e9",
    net_version: "1001",
    eth_blockNumber: "0x10",
    eth_getBlockByNumber: { number: "0x10", hash: word("11"), parentHash: word("22"), timestamp: "0x1" },
  };
  if (call.method === "eth_getLogs")
    return `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${logs}}`;
  return JSON.stringify({ jsonrpc: "2.0", id: call.id, result: results[call.method] ?? null });
}

const node = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => {
    body += chunk.toString();
  });
  request.on("end", () => {
    const calls = JSON.parse(body) as { id: unknown; method: string } | { id: unknown; method: string }[];
    response.setHeader("content-type", "application/json");
    response.end(Array.isArray(calls) ? `[${calls.map(answer).join(",")}]` : answer(calls));
  });
}).listen(0, "127.0.0.1");
await new Promise((resolve) => node.once("listening", resolve));
const nodeUrl = `http://127.0.0.1:${(node.address() as { port: number }).port}`;

const dir = mkdtempSync(join(tmpdir(), "chaingate-bench-large-"));
const children: ChildProcess[] = [];
// The answer is one block's logs: past the default 10,000-result cap, which is what is measured here.
process.env.CHAINGATE_MAX_LOGS_RESULTS = String(LOGS);
const gateway = await startGatewayProcess(nodeUrl, join(dir, "gateway"), children);
let peak = 0;
const sampler = setInterval(() => {
  const status = readFileSync(`/proc/${gateway.child.pid}/status`, "utf8");
  peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}, 50);

const rows = [];
try {
  for (const callers of [1, 2, 4]) {
    const sizes = await Promise.all(
      Array.from({ length: callers }, async () => {
        const reply = await fetch(gateway.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "eth_getLogs",
            params: [{ fromBlock: "0x1", toBlock: "0x1" }],
          }),
        });
        const text = await reply.text();
        if (!text.startsWith('{"jsonrpc":"2.0","id":1,"result":[')) throw new Error(text.slice(0, 200));
        return Math.round((text.length / 1048576) * 10) / 10;
      }),
    );
    rows.push({
      callers,
      answer_mb: sizes[0],
      peak_rss_mb: Math.round(peak),
      running: gateway.child.exitCode === null,
    });
  }
} finally {
  clearInterval(sampler);
  for (const child of children) child.kill("SIGTERM");
  node.close();
}
console.table(rows);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const when = new Date().toISOString();
const file = new URL(`./results/large-answers-${when.replace(/[:.]/g, "-")}.json`, import.meta.url);
writeFileSync(file, `${JSON.stringify({ when, logs: LOGS, rows }, null, 2)}\n`);
console.log(`written to ${file.pathname}`);
rmSync(dir, { recursive: true, force: true });
