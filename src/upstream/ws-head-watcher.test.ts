import { expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";

const own = ownNodes("ws-heads");

it("an upstream with a WebSocket pushes its new heads; the gateway knows them without polling", async () => {
  const node = await own.anvil("anvil");
  const config = own.configFile({
    chains: [{ chainId: 1001, upstreams: [{ url: node.url, ws: node.url.replace("http", "ws") }] }],
  });
  // Polling once a minute: any head seen sooner came over the WebSocket.
  const rt = await own.runtime({ env: { CHAINGATE_CONFIG: config, CHAINGATE_HEAD_POLL_MS: "60000" } });
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
