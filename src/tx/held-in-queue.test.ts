/** A transaction a node holds in its queue at the address's next nonce is replaced at once, not after the resend wait (decision 245). */
import { parseEther, toHex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { sendTransfer } from "../test-support/custody-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { newWallet } from "../test-support/token-helpers.js";

const PASSWORD = "held-in-queue-password";

describeEachStore("a transaction held in the node's queue", (target) => {
  const own = ownNodes(`held-in-queue-${target}`);
  let rt: TestRuntime;
  let anvilUrl: string;

  beforeAll(async () => {
    const anvil = await own.anvil("a");
    anvilUrl = anvil.url;
    rt = await startTestRuntime({
      store: target,
      env: {
        CHAINGATE_UPSTREAMS: anvil.url,
        CHAINGATE_TRACKER_INTERVAL_MS: "200",
        // Neither wait comes within the test: only the held transaction's own check can replace it.
        CHAINGATE_RESEND_AFTER_SECONDS: "600",
        CHAINGATE_REPLACE_AFTER_SECONDS: "600",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  const rowOf = (hash: string) =>
    rt.store.db.selectFrom("transactions").selectAll().where("tx_hash", "=", hash).executeTakeFirstOrThrow();
  const chainNonce = async (address: string) =>
    Number(BigInt((await nodeCall(anvilUrl, "eth_getTransactionCount", [address, "latest"])) as string));

  it("is replaced within seconds, and the replacement is mined at its nonce", async () => {
    const wallet = await newWallet(rt, PASSWORD);
    await nodeCall(anvilUrl, "anvil_setBalance", [wallet.address, toHex(parseEther("10"))]);
    // chaingate's first use of the address takes the chain's nonce: 5.
    await nodeCall(anvilUrl, "anvil_setNonce", [wallet.address, toHex(5)]);
    const first = await sendTransfer(rt, wallet, PASSWORD, "1");
    expect(await waitUntil(async () => (await chainNonce(wallet.address)) === 6, 60_000)).toBe(true);
    // The node's account goes back to 4: the next transfer (nonce 6) waits in its queue for a 5...
    await nodeCall(anvilUrl, "anvil_setNonce", [wallet.address, toHex(4)]);
    const held = await sendTransfer(rt, wallet, PASSWORD, "2");
    expect((await rowOf(held)).nonce).toBe(6);
    // ...and the account moves to 6 without it, as anvil's race leaves it: next by the chain, held
    // in the queue, never mined, never counted as pending.
    await nodeCall(anvilUrl, "anvil_setNonce", [wallet.address, toHex(6)]);
    const pool = (await nodeCall(anvilUrl, "txpool_status", [])) as { queued: string };
    expect(Number(BigInt(pool.queued))).toBeGreaterThanOrEqual(1);
    expect(await nodeCall(anvilUrl, "eth_getTransactionCount", [wallet.address, "pending"])).toBe(toHex(6));

    // Replaced long before either wait (600 s), and the replacement mined at nonce 6.
    expect(await waitUntil(async () => (await rowOf(held)).state === "replaced", 60_000)).toBe(true);
    expect(await waitUntil(async () => (await chainNonce(wallet.address)) === 7, 60_000)).toBe(true);
    const replacement = await rt.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("replaces", "=", (await rowOf(held)).id)
      .executeTakeFirstOrThrow();
    expect(replacement.nonce).toBe(6);
    expect(
      await waitUntil(
        async () => ["mined", "confirmed"].includes((await rowOf(replacement.tx_hash)).state),
        60_000,
      ),
    ).toBe(true);
    // The first transfer is untouched.
    expect(["mined", "confirmed"]).toContain((await rowOf(first)).state);
  }, 240_000);
});
