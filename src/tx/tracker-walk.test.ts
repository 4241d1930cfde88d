/** The tracker reaches every open transaction however many wait before it: rows past a pass's page are followed on the passes after (decision 220). */
import { randomBytes } from "node:crypto";
import { parseEther, toHex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { insertRows } from "../store/insert-row.js";
import type { TransactionsTable } from "../store/schema.js";
import { nodeCall } from "../test-support/chain-helpers.js";
import { waitUntil } from "../test-support/cli.js";
import { sendTransfer } from "../test-support/custody-helpers.js";
import { ownNodes } from "../test-support/own-nodes.js";
import { describeEachStore } from "../test-support/stores.js";
import { startTestRuntime, type TestRuntime } from "../test-support/test-runtime.js";
import { newWallet } from "../test-support/token-helpers.js";
import { BATCH } from "./tracker-context.js";

const PASSWORD = "tracker-walk-password";

describeEachStore("the tracker's walk over open transactions", (target) => {
  const own = ownNodes(`tracker-walk-${target}`);
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
        // The stuck rows below are neither resent nor replaced while the test runs.
        CHAINGATE_RESEND_AFTER_SECONDS: "600",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  const stateOf = async (hash: string) =>
    (
      await rt.store.db
        .selectFrom("transactions")
        .select("state")
        .where("tx_hash", "=", hash)
        .executeTakeFirstOrThrow()
    ).state;

  it("a transaction behind more stuck ones than a page holds still has its receipt read", async () => {
    // A row as the service writes it, to copy: one transfer, followed to the end.
    const first = await newWallet(rt, PASSWORD);
    await nodeCall(anvilUrl, "anvil_setBalance", [first.address, toHex(parseEther("10"))]);
    const template = await sendTransfer(rt, first, PASSWORD, "1");
    // Its receipt read (this node's chain is final 64 blocks down: `confirmed` comes later).
    const followed = async (hash: string) => ["mined", "confirmed"].includes(await stateOf(hash));
    expect(await waitUntil(() => followed(template), 60_000)).toBe(true);
    const row = await rt.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("tx_hash", "=", template)
      .executeTakeFirstOrThrow();

    // More sent transactions than a pass's page, from one address, at low nonces, that no node
    // knows: they stay `sent` (no receipt ever comes), first in nonce order.
    const stuck = `0x${randomBytes(20).toString("hex")}`;
    const now = Date.now();
    const rows: TransactionsTable[] = Array.from({ length: BATCH + 1 }, (_, nonce) => ({
      ...row,
      id: `walk-stuck-${String(nonce).padStart(4, "0")}`,
      from_address: stuck,
      nonce,
      tx_hash: `0x${randomBytes(32).toString("hex")}`,
      state: "sent",
      block_number: null,
      block_hash: null,
      created_at: now,
      updated_at: now,
      sent_at: now,
    }));
    await rt.store.db.transaction().execute((trx) => insertRows(trx, "transactions", rows));

    // A transfer whose nonce comes after all of them, mined at once (anvil mines each transaction).
    const later = await newWallet(rt, PASSWORD);
    await nodeCall(anvilUrl, "anvil_setBalance", [later.address, toHex(parseEther("10"))]);
    await nodeCall(anvilUrl, "anvil_setNonce", [later.address, toHex(BATCH + 100)]);
    const hash = await sendTransfer(rt, later, PASSWORD, "2");
    // Anvil answers the send before its block is written: on a busy machine the receipt comes a
    // moment later (read at once, it was null in one CI run in three).
    const mined = async () => (await nodeCall(anvilUrl, "eth_getTransactionReceipt", [hash])) !== null;
    expect(await waitUntil(mined, 60_000)).toBe(true);
    const receipt = (await nodeCall(anvilUrl, "eth_getTransactionReceipt", [hash])) as {
      status: string;
    } | null;
    expect(receipt?.status).toBe("0x1");
    // With the first page read every pass, its receipt was never asked for and it stayed `sent`.
    expect(await waitUntil(() => followed(hash), 60_000)).toBe(true);
    // The stuck rows are still followed, none moved (no node has them).
    const open = await rt.store.db
      .selectFrom("transactions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("from_address", "=", stuck)
      .where("state", "=", "sent")
      .executeTakeFirstOrThrow();
    expect(Number(open.n)).toBe(BATCH + 1);
    await rt.store.db.deleteFrom("transactions").where("from_address", "=", stuck).execute();
  }, 120_000);
});
