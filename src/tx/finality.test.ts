/** Every custody transaction followed to its chain's finality: a reorg inside the window (onto a longer fork) sends it back and it is broadcast again; a transport goes on with it. */
import type { Hex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { sendTransfer } from "../test-support/custody-helpers.js";
import { DEV_ACCOUNT_2 } from "../test-support/evm-fixtures.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { newWallet, ok, PASSWORD, settled } from "../test-support/token-helpers.js";

const FINALITY = 4;

describeEachStore("finality", (target) => {
  let rt: TestRuntime;
  let wallet: { id: string; address: Hex };
  const node = (method: string, params: unknown[] = []) => nodeCall(rt.devnet!.nodes[0]!.url, method, params);
  const head = async () => Number(await node("eth_blockNumber"));
  const row = (hash: string) =>
    rt.store.db.selectFrom("transactions").selectAll().where("tx_hash", "=", hash).executeTakeFirstOrThrow();

  beforeAll(async () => {
    rt = await startTestRuntime({
      store: target,
      env: {
        // The embedded chains' rule is --confirmations: here a window of 4 blocks.
        CHAINGATE_CONFIRMATIONS: String(FINALITY),
        CHAINGATE_TRACKER_INTERVAL_MS: "100",
        CHAINGATE_RELAYER_INTERVAL_MS: "100",
        CHAINGATE_RESEND_AFTER_SECONDS: "1",
      },
    });
    wallet = await newWallet(rt);
  }, 120_000);
  afterAll(async () => rt?.close());

  /** Rolls the chain back to `snapshot` and mines a longer fork without the transactions sent since. */
  async function reorg(snapshot: unknown, above: number): Promise<void> {
    expect(await node("evm_revert", [snapshot])).toBe(true);
    await node("anvil_dropAllTransactions");
    await node("anvil_mine", [`0x${(above - (await head()) + 1).toString(16)}`]);
    expect(await head()).toBeGreaterThan(above);
  }

  it("a transaction mined and then dropped by a reorg inside the window is sent again, and confirmed only once final", async () => {
    const snapshot = await node("evm_snapshot");
    const before = await head();
    const hash = await sendTransfer(rt, wallet, PASSWORD, "7");
    expect(await waitUntil(async () => (await row(hash)).state === "mined", 30_000)).toBe(true);
    const first = await row(hash);
    // Mined, not final: one block of four.
    expect(first.block_number).toBe(before + 1);
    expect((await row(hash)).state).toBe("mined");

    await reorg(snapshot, first.block_number!);
    expect(await node("eth_getTransactionReceipt", [hash])).toBeNull();
    // Sent back, broadcast again, mined on the new fork: its block there is another.
    expect(
      await waitUntil(async () => {
        const now = await row(hash);
        return now.state === "mined" && now.block_hash !== first.block_hash;
      }, 30_000),
    ).toBe(true);
    const again = await row(hash);
    expect(again.broadcasts).toBeGreaterThan(first.broadcasts);
    const receipt = (await node("eth_getTransactionReceipt", [hash])) as {
      blockHash: string;
      status: string;
    };
    expect(receipt).toMatchObject({ blockHash: again.block_hash, status: "0x1" });
    // Confirmed only once final by the chain's rule: FINALITY blocks, its own included.
    await node("anvil_mine", [`0x${(FINALITY - 2).toString(16)}`]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await row(hash)).state).toBe("mined");
    await node("anvil_mine", ["0x1"]);
    expect(await waitUntil(async () => (await row(hash)).state === "confirmed", 30_000)).toBe(true);
    // Its nonce was not reused: the chain holds it once, at the nonce it was signed with.
    expect(Number(await node("eth_getTransactionCount", [wallet.address, "latest"]))).toBe(again.nonce + 1);
  });

  it("a transport whose source transaction a reorg dropped goes on with it and is delivered", async () => {
    await ok(rt, "register_new_member", { name: `Peer ${target}`, chain_id: 1002, role: "AUDITOR" }).catch(
      () => undefined,
    );
    const created = await ok(rt, "create_new_ERC20_token", {
      wallet_id: wallet.id,
      password: PASSWORD,
      name: "Fork Coin",
      symbol: "FRK",
      initial_supply: "1000",
    });
    await waitUntil(async () => (await row(created.tx_hash as string)).state !== "sent", 30_000);
    await node("anvil_mine", [`0x${FINALITY.toString(16)}`]);
    const snapshot = await node("evm_snapshot");
    const sent = await ok(rt, "trasport_token", {
      wallet_id: wallet.id,
      password: PASSWORD,
      token: created.address,
      to: DEV_ACCOUNT_2,
      amount: "10",
      destination_chain_id: 1002,
    });
    const source = sent.tx_hash as string;
    expect(await waitUntil(async () => (await row(source)).state === "mined", 30_000)).toBe(true);
    await reorg(snapshot, (await row(source)).block_number!);
    // The tracker sends the source transaction again; blocks on top make it final, and the relayer delivers.
    expect(
      await waitUntil(async () => (await node("eth_getTransactionReceipt", [source])) !== null, 30_000),
    ).toBe(true);
    await node("anvil_mine", [`0x${FINALITY.toString(16)}`]);
    const done = await settled(rt, sent.transport_id as string, 60_000);
    expect(done.state).toBe("delivered");
  });
});
