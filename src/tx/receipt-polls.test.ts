/** A sent transaction's receipt is asked of the node once per head, not once per tracker pass: while no block comes, the node is not asked again; the next block's receipt is found. */
import { parseEther, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { sendTransfer } from "../test-support/custody-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { type RpcProxy, startRpcProxy } from "../test-support/rpc-proxy.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { newWallet } from "../test-support/token-helpers.js";

const PASSWORD = "receipt-polls-password";

describe("receipts of sent transactions", () => {
  const own = ownNodes("receipt-polls");
  let rt: TestRuntime;
  let proxy: RpcProxy;
  let anvilUrl: string;

  beforeAll(async () => {
    const anvil = await own.anvil("a");
    anvilUrl = anvil.url;
    proxy = await startRpcProxy(anvil.url);
    rt = await startTestRuntime({
      env: {
        CHAINGATE_UPSTREAMS: proxy.url,
        // Twenty passes a second against a head read four times a second (the default).
        CHAINGATE_TRACKER_INTERVAL_MS: "50",
        // Nothing is resent or replaced while the test holds the block back.
        CHAINGATE_RESEND_AFTER_SECONDS: "600",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
    await proxy?.close();
  });

  it("while the head stays, a pending transaction's receipt is not asked again; once a block comes it is found", async () => {
    const wallet = await newWallet(rt, PASSWORD);
    await nodeCall(anvilUrl, "anvil_setBalance", [wallet.address, toHex(parseEther("10"))]);
    // The node takes transactions into its pool and makes no block until told.
    await nodeCall(anvilUrl, "evm_setAutomine", [false]);
    const hash = await sendTransfer(rt, wallet, PASSWORD, "1");
    const state = async () =>
      (
        await rt.store.db
          .selectFrom("transactions")
          .select("state")
          .where("tx_hash", "=", hash)
          .executeTakeFirstOrThrow()
      ).state;
    expect(await waitUntil(async () => (await state()) === "sent", 30_000)).toBe(true);

    proxy.reset();
    const heads = () => proxy.counts.get("eth_blockNumber") ?? 0;
    // Eight head reads: about two seconds, some forty tracker passes over the one sent row.
    expect(await waitUntil(() => heads() >= 8, 60_000)).toBe(true);
    const asked = proxy.counts.get("eth_getTransactionReceipt") ?? 0;
    // One ask for the head the row was first missing at (two if a head read raced the first).
    expect(asked).toBeLessThanOrEqual(2);
    expect(await state()).toBe("sent");

    await nodeCall(anvilUrl, "evm_mine", []);
    expect(await waitUntil(async () => ["mined", "confirmed"].includes(await state()), 30_000)).toBe(true);
    expect(proxy.counts.get("eth_getTransactionReceipt") ?? 0).toBeGreaterThan(asked);
  });
});
