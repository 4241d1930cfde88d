import { expect, it } from "vitest";
import { native } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { freePort } from "../test-support/ports.js";

const own = ownNodes("failover");

it("killing one of two upstreams under load costs the client (almost) nothing, and it is used again when back", async () => {
  const portB = await freePort();
  const a = await own.anvil("a");
  let b = await own.anvil("b", { port: portB });
  // No cache: every read is forwarded, so the load really goes to both nodes. No hedges: a node
  // that lost two of them while it was being stopped is asked after its peer for the pool's next
  // 2,048 calls (decision 154), which a busy machine's recovery loop may not reach within its
  // deadline; hedging is tested apart (hedged-reads.test.ts), failover here.
  const config = own.configFile({
    chains: [{ chainId: 1001, upstreams: [{ url: a.url }, { url: b.url }], hedge: false }],
  });
  const runtime = await own.runtime({ env: { CHAINGATE_CONFIG: config, CHAINGATE_CACHE_MB: "0" } });
  const stats = () => runtime.chains.home.pool.stats();

  const reads: [string, unknown[]][] = [
    ["eth_chainId", []],
    ["eth_getBalance", [DEV_ACCOUNT, "latest"]],
    ["eth_blockNumber", []],
    ["eth_getTransactionCount", [DEV_ACCOUNT, "latest"]],
  ];
  let sent = 0;
  let failed = 0;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const [method, params] = reads[sent++ % reads.length]!;
      const envelope = await native(runtime, method, params).catch(() => undefined);
      if (!envelope || envelope.error) failed++;
    }
  };
  const workers = Array.from({ length: 16 }, worker);
  await new Promise((r) => setTimeout(r, 1000));
  const beforeKill = stats();
  expect(beforeKill.every((s) => s.answered > 0)).toBe(true);
  await b.stop();
  // Load for at least 2 s after the kill and at least 1,000 requests in all, however busy the machine.
  const killedAt = Date.now();
  while ((Date.now() - killedAt < 2000 || sent <= 1000) && Date.now() - killedAt < 60_000)
    await new Promise((r) => setTimeout(r, 50));
  stop = true;
  await Promise.all(workers);
  process.stdout.write(`failover: ${failed} of ${sent} requests failed\n`);
  expect(sent).toBeGreaterThan(1000);
  expect(failed / sent).toBeLessThan(0.001);

  // Back on the same address: after its cool-down it answers again.
  b = await own.anvil("b", { port: portB });
  const servedBefore = stats()[1]!.answered;
  const deadline = Date.now() + 40_000;
  while (stats()[1]!.answered === servedBefore && Date.now() < deadline) {
    await native(runtime, "eth_chainId");
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(stats()[1]!.answered).toBeGreaterThan(servedBefore);
}, 90_000);
