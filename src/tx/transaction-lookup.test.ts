/** Lookups by hash without a hash index (decision 204): a replacement by sender and nonce, a transport's source by its id, on both stores. */
import { expect, it } from "vitest";
import type { TransactionsTable } from "../store/schema.js";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import { transactionRow } from "../test-support/transaction-row.js";
import { finalOf, replacementOf, transportSource } from "./transaction-lookup.js";

const SENDER = "0x70997970C51812dc3A010C7901b1cfcCcC3F7aA2";
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

/** A sent transfer of SENDER's unless a test says otherwise; only what the lookups read differs between rows. */
const row = (
  id: string,
  fields: Pick<TransactionsTable, "tx_hash" | "nonce" | "state"> & Partial<TransactionsTable>,
): TransactionsTable =>
  transactionRow({ id, from_address: SENDER, to_address: OTHER, broadcasts: 1, sent_at: 1, ...fields });

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

describeEachStore(
  "lookups by hash through the sender's nonce and the transport id (decision 204)",
  (target) => {
    const opened = suiteStore(target);

    it("follows fee bumps by sender and nonce to the record that stands, and finds a transport's source by its id", async () => {
      const db = opened.store.db;
      await db
        .insertInto("transactions")
        .values([
          // The source of transport 0xabc, bumped twice; the last bump failed.
          row("a1", {
            tx_hash: hash(1),
            nonce: 7,
            state: "replaced",
            replaced_by: hash(2),
            transport_id: "0xabc",
          }),
          row("a2", { tx_hash: hash(2), nonce: 7, state: "replaced", replaced_by: hash(3), replaces: "a1" }),
          row("a3", { tx_hash: hash(3), nonce: 7, state: "failed", error: "out of gas", replaces: "a2" }),
          // The same hash as a3's under another sender and nonce is never taken for its replacement.
          row("b1", { tx_hash: hash(9), nonce: 8, state: "replaced", replaced_by: hash(3) }),
          row("c1", { tx_hash: hash(4), nonce: 7, state: "sent", from_address: OTHER }),
        ])
        .execute();
      const [a1] = await db.selectFrom("transactions").selectAll().where("id", "=", "a1").execute();
      expect((await replacementOf(opened.store, a1!))?.id).toBe("a2");
      expect((await finalOf(opened.store, a1))?.id).toBe("a3");
      const b1 = await db
        .selectFrom("transactions")
        .selectAll()
        .where("id", "=", "b1")
        .executeTakeFirstOrThrow();
      expect(await replacementOf(opened.store, b1)).toBeUndefined();
      expect((await finalOf(opened.store, b1))?.id).toBe("b1");
      const source = await transportSource(opened.store, "0xabc", hash(1));
      expect(source).toMatchObject({ id: "a3", state: "failed", error: "out of gas" });
      // Not this transport's source, or not chaingate's: nothing.
      expect(await transportSource(opened.store, "0xdef", hash(1))).toBeUndefined();
      expect(await transportSource(opened.store, "0xabc", hash(4))).toBeUndefined();
    });
  },
);
