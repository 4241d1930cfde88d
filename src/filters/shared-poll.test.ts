import { afterAll, expect, it } from "vitest";
import { devSend, receiptOf, result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, EMITTER_INIT_CODE } from "../test-support/evm-fixtures.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";

const own = ownNodes("shared-poll");
let proxy: RpcProxy | undefined;
afterAll(async () => {
  await proxy?.close();
});

it("twenty log filters with different criteria polling a new block cost one eth_getLogs between them", async () => {
  const anvil = await own.anvil("anvil");
  proxy = await startRpcProxy(anvil.url);
  const runtime = await own.runtime({ env: { CHAINGATE_UPSTREAMS: proxy.url } });
  const deployed = await devSend(runtime, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE });
  const emitter = (await receiptOf(runtime, deployed)).contractAddress!;
  const filters: string[] = [];
  for (let i = 0; i < 20; i++) {
    const other = `0x${(i + 1).toString(16).padStart(40, "0")}`;
    filters.push(await result<string>(runtime, "eth_newFilter", [{ address: [emitter, other] }]));
  }
  await receiptOf(runtime, await devSend(runtime, { from: DEV_ACCOUNT, to: emitter }));
  proxy.reset();
  const changes = await Promise.all(
    filters.map((id) => result<unknown[]>(runtime, "eth_getFilterChanges", [id])),
  );
  expect(changes.map((c) => c.length)).toEqual(Array(20).fill(1));
  // One read of the block's logs, matched in chaingate against every filter's criteria.
  expect(proxy.counts.get("eth_getLogs")).toBe(1);
});
