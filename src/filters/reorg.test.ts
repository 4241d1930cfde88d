import { afterAll, beforeAll, expect, it } from "vitest";
import {
  collectLogNotifications,
  devSend,
  nodeCall,
  receiptOf,
  result,
} from "../test-support/chain-helpers.js";
import { DEV_ACCOUNT, EMITTER_INIT_CODE, EMITTER_TOPIC } from "../test-support/evm-fixtures.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

interface Log {
  transactionHash: string;
  blockHash: string;
  removed: boolean;
}

const anvil = (rt: TestRuntime, method: string, params: unknown[] = []) =>
  nodeCall(rt.devnet!.nodes[0]!.url, method, params);

describeEachStore("filters across a reorg", (target) => {
  let rt: TestRuntime;
  let emitter: string;
  beforeAll(async () => {
    rt = await startTestRuntime({
      store: target,
      env: { CHAINGATE_CACHE_MB: "0", CHAINGATE_HEAD_POLL_MS: "50" },
    });
    const deployed = await receiptOf(rt, await devSend(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE }));
    emitter = deployed.contractAddress!;
  });
  afterAll(async () => rt?.close());

  const emit = async (value = "0x0") => {
    const hash = await devSend(rt, { from: DEV_ACCOUNT, to: emitter, value });
    await receiptOf(rt, hash);
    return hash;
  };

  it("logs of replaced blocks come back with removed: true, then the new chain's logs; block filters get the new hashes", async () => {
    const logFilter = await result<string>(rt, "eth_newFilter", [
      { address: emitter, topics: [EMITTER_TOPIC] },
    ]);
    const subscription = await collectLogNotifications(rt, { address: emitter });
    const blockFilter = await result<string>(rt, "eth_newBlockFilter", []);
    const snapshot = await anvil(rt, "evm_snapshot");

    const old1 = await emit();
    const old2 = await emit();
    const before = await result<Log[]>(rt, "eth_getFilterChanges", [logFilter]);
    expect(before.map((l) => [l.transactionHash, l.removed])).toEqual([
      [old1, false],
      [old2, false],
    ]);
    const oldBlocks = await result<string[]>(rt, "eth_getFilterChanges", [blockFilter]);
    expect(oldBlocks).toHaveLength(2);

    // The reorg: the two blocks are replaced by three others, with another log (a different transaction at the same nonce).
    expect(await anvil(rt, "evm_revert", [snapshot])).toBe(true);
    const fresh = await emit("0x1");
    await anvil(rt, "anvil_mine", ["0x2"]);

    const after = await result<Log[]>(rt, "eth_getFilterChanges", [logFilter]);
    expect(after.map((l) => [l.transactionHash, l.removed])).toEqual([
      [old1, true],
      [old2, true],
      [fresh, false],
    ]);
    const newBlocks = await result<string[]>(rt, "eth_getFilterChanges", [blockFilter]);
    expect(newBlocks).toHaveLength(3);
    expect(newBlocks.some((h) => oldBlocks.includes(h))).toBe(false);

    // The subscription saw the same story, in order.
    for (let i = 0; i < 60 && subscription.seen.length < 5; i++) await new Promise((r) => setTimeout(r, 50));
    subscription.close();
    expect(subscription.seen.map((n) => [n.split(":")[0], n.endsWith(":true")])).toEqual([
      [old1, false],
      [old2, false],
      [old1, true],
      [old2, true],
      [fresh, false],
    ]);

    // And nothing twice afterwards.
    expect(await result<Log[]>(rt, "eth_getFilterChanges", [logFilter])).toEqual([]);
    const later = await emit();
    expect(
      (await result<Log[]>(rt, "eth_getFilterChanges", [logFilter])).map((l) => l.transactionHash),
    ).toEqual([later]);
  });
});
