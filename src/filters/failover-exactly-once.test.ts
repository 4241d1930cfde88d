import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../devnet/anvil-node.js";
import { collectLogNotifications, devSend, receiptOf, result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, EMITTER_INIT_CODE, EMITTER_TOPIC } from "../test-support/evm-fixtures.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-filter-failover-"));
let node: AnvilNode | undefined;
let rt: TestRuntime | undefined;
const proxies: Server[] = [];
afterAll(async () => {
  await rt?.close();
  for (const proxy of proxies) proxy.closeAllConnections();
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Two upstreams that are the same chain: HTTP proxies to one anvil, so one can die while the chain goes on. */
async function proxyTo(target: string): Promise<Server> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const answer = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Buffer.concat(chunks),
    });
    response.writeHead(answer.status, { "content-type": "application/json" });
    response.end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxies.push(server);
  return server;
}

it("a log filter and a logs subscription deliver every log exactly once across an upstream failover", async () => {
  const anvil = await startAnvil({
    chainId: 1001,
    dir: join(dir, "anvil"),
    blockTime: 0,
    logger: pino({ level: "silent" }),
  });
  node = anvil;
  const [a, b] = [await proxyTo(node.url), await proxyTo(node.url)];
  const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  rt = await startTestRuntime({
    env: {
      CHAINGATE_UPSTREAMS: `${urlOf(a)},${urlOf(b)}`,
      CHAINGATE_HEAD_POLL_MS: "50",
      CHAINGATE_CACHE_MB: "0",
    },
  });
  const runtime = rt;
  const deployed = await receiptOf(
    runtime,
    await devSend(runtime, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE }, "", anvil.url),
  );
  const emitter = deployed.contractAddress!;
  const filterId = await result<string>(runtime, "eth_newFilter", [
    { address: emitter, topics: [EMITTER_TOPIC] },
  ]);
  const pendingId = await result<string>(runtime, "eth_newPendingTransactionFilter", []);
  const pendingSeen: string[] = [];

  const subscription = await collectLogNotifications(runtime, { address: emitter });
  const notified = subscription.seen;

  const emitted: string[] = [];
  const polled: string[] = [];
  const emit = async () => {
    const hash = await devSend(runtime, { from: DEV_ACCOUNT, to: emitter }, "", anvil.url);
    await receiptOf(runtime, hash);
    emitted.push(`${hash}:0x0`);
  };
  const poll = async () => {
    pendingSeen.push(...(await result<string[]>(runtime, "eth_getFilterChanges", [pendingId])));
    const changes = await result<{ transactionHash: string; logIndex: string }[]>(
      runtime,
      "eth_getFilterChanges",
      [filterId],
    );
    polled.push(...changes.map((log) => `${log.transactionHash}:${log.logIndex}`));
  };

  for (let i = 0; i < 5; i++) await emit();
  await poll();
  // Upstream A dies: its port stops answering.
  a.closeAllConnections();
  await new Promise<void>((resolve) => a.close(() => resolve()));
  for (let i = 0; i < 5; i++) {
    await emit();
    if (i % 2 === 0) await poll();
  }
  await new Promise((r) => setTimeout(r, 500));
  await poll();
  for (let i = 0; i < 40 && notified.length < emitted.length; i++)
    await new Promise((r) => setTimeout(r, 50));
  subscription.close();

  expect(runtime.chains.home.pool.stats()[0]!.faults).toBeGreaterThan(0);
  expect(polled).toEqual(emitted);
  expect(notified).toEqual(emitted.map((e) => `${e}:false`));
  // The pending-transaction filter, fed by every upstream's node filter, saw each transaction once.
  const sentHashes = emitted.map((e) => e.split(":")[0]!);
  expect(pendingSeen.filter((h) => sentHashes.includes(h)).sort()).toEqual([...sentHashes].sort());
}, 60_000);
