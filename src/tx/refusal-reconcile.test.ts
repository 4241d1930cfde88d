/** A record dropped on a node's wrong word follows the chain at the next reconcile, once its own transaction is found mined (decision 192). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { waitUntil } from "../test-support/cli.js";
import { fundedCustody, recordOf, sendTransfer } from "../test-support/custody-helpers.js";
import { describeEachStore, type TempStore, tempStore } from "../test-support/stores.js";
import { startTestRuntime } from "../test-support/test-runtime.js";

const PASSWORD = "refusal-reconcile";

describeEachStore("a dropped record whose transaction is mined", (target) => {
  let store: TempStore;
  const dataDir = mkdtempSync(join(tmpdir(), "chaingate-refusal-"));
  beforeAll(async () => {
    store = await tempStore(target);
  });
  afterAll(async () => {
    await store?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is moved to mined, at its receipt's block, when chaingate starts again", async () => {
    const env = { CHAINGATE_TRACKER_INTERVAL_MS: "100" };
    const first = await startTestRuntime({ store, dataDir, env });
    let hash: string;
    let block: string | null;
    try {
      const wallet = await fundedCustody(first, { password: PASSWORD, unlock: false });
      hash = await sendTransfer(first, wallet, PASSWORD, "7");
      expect(await waitUntil(async () => (await recordOf(first, hash)).state === "confirmed", 20_000)).toBe(
        true,
      );
      block = (await recordOf(first, hash)).block_hash;
      // What the tracker writes when a node answers "nonce too low" and, for that moment, knows
      // neither the hash nor its receipt: the nonce taken by another transaction.
      await first.store.db
        .updateTable("transactions")
        .set({
          state: "dropped",
          block_number: null,
          block_hash: null,
          error: "nonce 0 was used by another transaction",
        })
        .where("tx_hash", "=", hash)
        .execute();
    } finally {
      await first.close();
    }

    const second = await startTestRuntime({ store, dataDir, env });
    try {
      expect(
        await waitUntil(
          async () => ["mined", "confirmed"].includes((await recordOf(second, hash)).state),
          20_000,
        ),
      ).toBe(true);
      expect(await recordOf(second, hash)).toMatchObject({ block_hash: block, error: null });
    } finally {
      await second.close();
    }
  }, 120_000);
});
