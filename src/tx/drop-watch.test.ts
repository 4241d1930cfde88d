/** A record dropped on a lagging node's word follows its own receipt while chaingate runs, without a restart (decision 193). */
import { afterAll, beforeAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { fundedCustody, recordOf, sendTransfer } from "../test-support/custody-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";
import type { TestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "drop-watch";
/** What a node that lags behind the one that took the send does not know yet. */
const LAGGING = new Set(["eth_getTransactionByHash", "eth_getTransactionReceipt"]);

describeEachStore("a record dropped while its node lagged", (target) => {
  const own = ownNodes(`drop-watch-${target}`);
  let store: TempStore;
  let rt: TestRuntime;
  let proxy: RpcProxy;
  let anvilUrl: string;
  /** While true the node knows no transaction by hash, nor any receipt: it lags the chain it counts nonces of. */
  let lagging = true;

  beforeAll(async () => {
    store = await tempStore(target);
    const anvil = await own.anvil("a");
    anvilUrl = anvil.url;
    proxy = await startRpcProxy(
      anvil.url,
      undefined,
      (call, answer) => (lagging && LAGGING.has(call.method) ? { result: null } : answer),
      { batches: true },
    );
    rt = await own.runtime({
      store,
      env: {
        CHAINGATE_UPSTREAMS: proxy.url,
        CHAINGATE_TRACKER_INTERVAL_MS: "100",
        CHAINGATE_RESEND_AFTER_SECONDS: "1",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
    await proxy?.close();
    await store?.drop();
  });

  it("moves to mined at its receipt's block once the node shows it", async () => {
    const wallet = await fundedCustody(rt, { password: PASSWORD, unlock: false });
    const hash = await sendTransfer(rt, wallet, PASSWORD, "7");
    // anvil mined it at once; the lagging node shows neither it nor its receipt, so the tracker
    // resends it, hears "nonce too low", finds the nonce used and the hash unknown: dropped.
    expect(await waitUntil(async () => (await recordOf(rt, hash)).state === "dropped", 20_000)).toBe(true);
    const receipt = (await nodeCall(anvilUrl, "eth_getTransactionReceipt", [hash])) as { blockHash: string };
    expect(receipt.blockHash).toMatch(/^0x[0-9a-f]{64}$/);

    lagging = false;
    // The chain goes on, as chains do: a receipt is asked again at a new head (decision 187).
    await nodeCall(anvilUrl, "evm_mine", []);
    expect(
      await waitUntil(async () => ["mined", "confirmed"].includes((await recordOf(rt, hash)).state), 20_000),
    ).toBe(true);
    expect(await recordOf(rt, hash)).toMatchObject({ block_hash: receipt.blockHash, error: null });
  }, 120_000);
});
