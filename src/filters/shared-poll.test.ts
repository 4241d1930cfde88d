import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../devnet/anvil-node.js";
import { devSend, receiptOf, result } from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, EMITTER_INIT_CODE } from "../test-support/evm-fixtures.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

const dir = mkdtempSync(join(tmpdir(), "chaingate-shared-poll-"));
let anvil: AnvilNode | undefined;
let proxy: RpcProxy | undefined;
let rt: TestRuntime | undefined;
afterAll(async () => {
  await rt?.close();
  await proxy?.close();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("twenty log filters with different criteria polling a new block cost one eth_getLogs between them", async () => {
  anvil = await startAnvil({
    chainId: 1001,
    dir: join(dir, "anvil"),
    blockTime: 0,
    logger: pino({ level: "silent" }),
  });
  proxy = await startRpcProxy(anvil.url);
  rt = await startTestRuntime({ env: { CHAINGATE_UPSTREAMS: proxy.url } });
  const runtime = rt;
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
