import { afterAll, beforeAll, expect, it } from "vitest";
import { mine, native, type Receipt, result, sendAndWait } from "../test-support/chain-helpers.js";
import {
  DEV_ACCOUNT,
  DEV_ACCOUNT_2,
  EMITTER_INIT_CODE,
  EMITTER_TOPIC,
} from "../test-support/evm-fixtures.js";
import { describeEachStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";

describeEachStore("gateway-owned filters", (target) => {
  let rt: TestRuntime;
  let emitter: string;
  beforeAll(async () => {
    rt = await startTestRuntime({ store: target, env: { CHAINGATE_FILTER_IDLE_SECONDS: "2" } });
    emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE })).contractAddress!;
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("a block filter returns each new block hash once, in order", async () => {
    const id = await result<string>(rt, "eth_newBlockFilter");
    expect(await result(rt, "eth_getFilterChanges", [id])).toEqual([]);
    await mine(rt, 3);
    const hashes = await result<string[]>(rt, "eth_getFilterChanges", [id]);
    expect(hashes).toHaveLength(3);
    const head = Number(await result<string>(rt, "eth_blockNumber"));
    for (let i = 0; i < 3; i++) {
      const block = await result<{ hash: string }>(rt, "eth_getBlockByNumber", [
        `0x${(head - 2 + i).toString(16)}`,
      ]);
      expect(hashes[i]).toBe(block.hash);
    }
    expect(await result(rt, "eth_getFilterChanges", [id])).toEqual([]);
  });

  it("concurrent polls of one filter deliver every change exactly once", async () => {
    const id = await result<string>(rt, "eth_newBlockFilter");
    await mine(rt, 5);
    const polls = await Promise.all(
      Array.from({ length: 6 }, () => result<string[]>(rt, "eth_getFilterChanges", [id])),
    );
    const all = polls.flat();
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(5);
  });

  it("a log filter returns matching logs since the last poll, once; getFilterLogs returns them all", async () => {
    const id = await result<string>(rt, "eth_newFilter", [{ address: emitter, topics: [EMITTER_TOPIC] }]);
    const a = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
    await sendAndWait(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" });
    const b = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
    const changes = await result<{ transactionHash: string; removed: boolean }[]>(
      rt,
      "eth_getFilterChanges",
      [id],
    );
    expect(changes.map((l) => l.transactionHash)).toEqual([a.transactionHash, b.transactionHash]);
    expect(changes.every((l) => l.removed === false)).toBe(true);
    expect(await result(rt, "eth_getFilterChanges", [id])).toEqual([]);

    const ranged = await result<string>(rt, "eth_newFilter", [
      { fromBlock: "0x0", toBlock: "latest", address: emitter, topics: [EMITTER_TOPIC] },
    ]);
    const logs = await result<{ transactionHash: string }[]>(rt, "eth_getFilterLogs", [ranged]);
    expect(logs.map((l) => l.transactionHash)).toEqual(
      expect.arrayContaining([a.transactionHash, b.transactionHash]),
    );
  });

  it("a blockHash log filter delivers that block's logs once", async () => {
    const r: Receipt = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
    const id = await result<string>(rt, "eth_newFilter", [{ blockHash: r.blockHash }]);
    const first = await result<{ transactionHash: string }[]>(rt, "eth_getFilterChanges", [id]);
    expect(first.map((l) => l.transactionHash)).toEqual([r.transactionHash]);
    expect(await result(rt, "eth_getFilterChanges", [id])).toEqual([]);
  });

  it("a pending-transaction filter reports hashes of new transactions", async () => {
    const id = await result<string>(rt, "eth_newPendingTransactionFilter");
    const r = await sendAndWait(rt, { from: DEV_ACCOUNT, to: DEV_ACCOUNT_2, value: "0x1" });
    // Polled as a client polls: the hash shows up within a poll or two, and only once.
    const hashes: string[] = [];
    for (let i = 0; i < 40 && !hashes.includes(r.transactionHash); i++) {
      hashes.push(...(await result<string[]>(rt, "eth_getFilterChanges", [id])));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    hashes.push(...(await result<string[]>(rt, "eth_getFilterChanges", [id])));
    expect(hashes.filter((h) => h === r.transactionHash)).toHaveLength(1);
  });

  it("uninstall answers true once, then false; a removed or unknown filter is 'filter not found'", async () => {
    const id = await result<string>(rt, "eth_newBlockFilter");
    expect(await result(rt, "eth_uninstallFilter", [id])).toBe(true);
    expect(await result(rt, "eth_uninstallFilter", [id])).toBe(false);
    const gone = await native(rt, "eth_getFilterChanges", [id]);
    expect(gone.error).toMatchObject({ code: -32000, message: "filter not found" });
    const never = await native(rt, "eth_getFilterLogs", ["0x1234"]);
    expect(never.error?.code).toBe(-32000);
  });

  it("a filter belongs to its chain", async () => {
    const id = await result<string>(rt, "eth_newBlockFilter");
    const other = await native(rt, "eth_getFilterChanges", [id], "?chain_id=1002");
    expect(other.error?.message).toBe("filter not found");
  });

  it("an idle filter expires", async () => {
    const id = await result<string>(rt, "eth_newBlockFilter");
    await new Promise((r) => setTimeout(r, 2_500));
    const expired = await native(rt, "eth_getFilterChanges", [id]);
    expect(expired.error?.message).toBe("filter not found");
  });
});

describeEachStore("filters survive a restart of chaingate", (target) => {
  it("a log filter installed before a restart delivers every later log exactly once", async () => {
    const store = await tempStore(target);
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dataDir = mkdtempSync(join(tmpdir(), "chaingate-restart-"));
    try {
      let rt = await startTestRuntime({ store, dataDir });
      const emitter = (await sendAndWait(rt, { from: DEV_ACCOUNT, data: EMITTER_INIT_CODE }))
        .contractAddress!;
      const id = await result<string>(rt, "eth_newFilter", [{ address: emitter }]);
      const before = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
      expect(
        (await result<{ transactionHash: string }[]>(rt, "eth_getFilterChanges", [id])).map(
          (l) => l.transactionHash,
        ),
      ).toEqual([before.transactionHash]);
      const between = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
      await rt.close();

      rt = await startTestRuntime({ store, dataDir });
      const after = await sendAndWait(rt, { from: DEV_ACCOUNT, to: emitter });
      const changes = await result<{ transactionHash: string }[]>(rt, "eth_getFilterChanges", [id]);
      expect(changes.map((l) => l.transactionHash)).toEqual([between.transactionHash, after.transactionHash]);
      expect(await result(rt, "eth_getFilterChanges", [id])).toEqual([]);
      await rt.close();
    } finally {
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
