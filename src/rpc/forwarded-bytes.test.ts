/** A forwarded read chaingate does not rework reaches the client as the node's own bytes: no parse and re-serialise on the way (numbers past 2^53 and key order survive). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "../test-support/cli.js";
import { DEV_ACCOUNT } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import type { TestRuntime } from "../test-support/test-runtime.js";

/** What the node answers for eth_getStorageAt: a result JSON.parse could not give back as it was. */
const RESULT_TEXT =
  '{"zeta":12345678901234567890123,"alpha":[1,2,{"z":0.1000000000000000055511151231257827}]}';

const own = ownNodes("forwarded-bytes");

describe("forwarded reads as the node's bytes", () => {
  let proxy: RpcProxy;
  let rt: TestRuntime;

  beforeAll(async () => {
    const node = await own.anvil("node");
    proxy = await startRpcProxy(node.url, (method, id, response) => {
      if (method !== "eth_getStorageAt") return false;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${RESULT_TEXT}}`);
      return true;
    });
    const config = join(own.dir, "chains.json");
    writeFileSync(config, JSON.stringify({ chains: [{ chainId: 1001, upstreams: [{ url: proxy.url }] }] }));
    rt = await own.runtime({ env: { CHAINGATE_CONFIG: config } });
    // The cache keeps an answer only against a head it knows: a first call before the head tracker's
    // first poll would be forwarded and not kept (a busy machine lost this test that way).
    expect(await waitUntil(() => rt.chains.home.head?.head !== undefined, 20_000)).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
  });

  const raw = async (path: string, body: unknown) =>
    (
      await fetch(`${rt.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).text();

  it("on POST / and on a Native path, the first answer and the cached one alike", async () => {
    const call = { jsonrpc: "2.0", id: 7, method: "eth_getStorageAt", params: [DEV_ACCOUNT, "0x0", "0x0"] };
    for (let i = 0; i < 2; i++)
      expect(await raw("/", call)).toBe(`{"jsonrpc":"2.0","id":7,"result":${RESULT_TEXT}}`);
    expect(await raw("/eth_getStorageAt", { id: 8, params: [DEV_ACCOUNT, "0x1", "0x0"] })).toBe(
      `{"jsonrpc":"2.0","id":8,"result":${RESULT_TEXT}}`,
    );
    // The second POST / answer came from the cache (the node was asked once per distinct call).
    expect(proxy.counts.get("eth_getStorageAt")).toBe(2);
  });

  it("a method chaingate reworks (eth_blockNumber: never behind the head it knows) is still parsed", async () => {
    const answer = JSON.parse(
      await raw("/", { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
    ) as {
      result: string;
    };
    expect(answer.result).toMatch(/^0x[0-9a-f]+$/);
  });
});
