/** The tracker asks the node once per head, not once per pass: a sent transaction's receipt (the next block's is found) and a mined one's block (read again at the next head, confirmed once final). */
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

describe("the tracker's reads of receipts and blocks", () => {
  const own = ownNodes("receipt-polls");
  let rt: TestRuntime;
  let proxy: RpcProxy;
  let anvilUrl: string;
  /** eth_getBlockByNumber calls by the block number asked (hex), since the last clear. */
  const blockReads = new Map<string, number>();

  beforeAll(async () => {
    const anvil = await own.anvil("a");
    anvilUrl = anvil.url;
    proxy = await startRpcProxy(anvil.url, (method, _id, _response, call) => {
      const block = call.params?.[0];
      if (method === "eth_getBlockByNumber" && typeof block === "string")
        blockReads.set(block, (blockReads.get(block) ?? 0) + 1);
      return false;
    });
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

  it("while the head stays, a mined row's block is not read again; a new head reads it, and it is confirmed once final", async () => {
    const wallet = await newWallet(rt, PASSWORD);
    await nodeCall(anvilUrl, "anvil_setBalance", [wallet.address, toHex(parseEther("10"))]);
    // No block is made until the test mines one.
    await nodeCall(anvilUrl, "evm_setAutomine", [false]);
    const hash = await sendTransfer(rt, wallet, PASSWORD, "1");
    const row = () =>
      rt.store.db
        .selectFrom("transactions")
        .select(["state", "block_number"])
        .where("tx_hash", "=", hash)
        .executeTakeFirstOrThrow();
    expect(await waitUntil(async () => (await row()).state === "sent", 30_000)).toBe(true);
    await nodeCall(anvilUrl, "evm_mine", []);
    expect(await waitUntil(async () => (await row()).state === "mined", 30_000)).toBe(true);
    const block = toHex((await row()).block_number!);
    const reads = () => blockReads.get(block) ?? 0;

    proxy.reset();
    blockReads.clear();
    const heads = () => proxy.counts.get("eth_blockNumber") ?? 0;
    // Eight head reads: about two seconds, some forty passes over the one mined row.
    expect(await waitUntil(() => heads() >= 8, 60_000)).toBe(true);
    // At most once: for a head the row's block had not been read at when the count began.
    expect(reads()).toBeLessThanOrEqual(1);
    expect((await row()).state).toBe("mined");

    const before = reads();
    await nodeCall(anvilUrl, "evm_mine", []);
    // A new head, not yet final: the block is read again (a reorg would show here).
    expect(await waitUntil(() => reads() > before, 30_000)).toBe(true);
    expect((await row()).state).toBe("mined");
    // A node's own chain is final at its `finalized` block (anvil's: 64 below the head).
    await nodeCall(anvilUrl, "anvil_mine", [toHex(70)]);
    expect(await waitUntil(async () => (await row()).state === "confirmed", 30_000)).toBe(true);
  });
});
