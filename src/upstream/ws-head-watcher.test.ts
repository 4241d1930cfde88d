import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../devnet/anvil-node.js";
import { nodeCall } from "../test-support/chain-helpers.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-ws-heads-"));
let node: AnvilNode | undefined;
let rt: TestRuntime | undefined;
afterAll(async () => {
  await rt?.close();
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("an upstream with a WebSocket pushes its new heads; the gateway knows them without polling", async () => {
  node = await startAnvil({
    chainId: 1001,
    dir: join(dir, "anvil"),
    blockTime: 0,
    logger: pino({ level: "silent" }),
  });
  const config = join(dir, "chaingate.json");
  writeFileSync(
    config,
    JSON.stringify({
      chains: [{ chainId: 1001, upstreams: [{ url: node.url, ws: node.url.replace("http", "ws") }] }],
    }),
  );
  // Polling once a minute: any head seen sooner came over the WebSocket.
  rt = await startTestRuntime({ env: { CHAINGATE_CONFIG: config, CHAINGATE_HEAD_POLL_MS: "60000" } });
  const chain = rt.chains.home;
  await new Promise((r) => setTimeout(r, 300));
  for (const blocks of [1, 3]) {
    const target = (chain.pool.bestHead ?? 0) + blocks;
    await nodeCall(node.url, "anvil_mine", [`0x${blocks.toString(16)}`]);
    for (let i = 0; i < 40 && chain.head?.head !== target; i++) await new Promise((r) => setTimeout(r, 50));
    expect(chain.head?.head).toBe(target);
    expect(chain.pool.stats()[0]!.head).toBe(target);
  }
}, 60_000);
