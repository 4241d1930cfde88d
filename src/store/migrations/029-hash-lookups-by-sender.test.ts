/** Migration 029: no index on the hash, and each lookup by hash goes through an index every send writes in order. */
import { expect, it } from "vitest";
import { planOf } from "../../test-support/query-plan.js";
import { describeEachStore, suiteStore } from "../../test-support/stores.js";

const HASH = `'0x${"ab".repeat(32)}'`;
const SENDER = "'0x70997970C51812dc3A010C7901b1cfcCcC3F7aA2'";

describeEachStore("lookups by hash without a hash index (migration 029)", (target) => {
  const opened = suiteStore(target);

  it("has no index on the hash: a send writes no random page for it", async () => {
    const plan = await planOf(opened.store, `select * from transactions where tx_hash = ${HASH}`);
    expect(plan).not.toContain("transactions_hash");
  });

  it("reads a replacement, a bundle's calls and a transport's source through the sender-nonce and transport indexes", async () => {
    const replacement = await planOf(
      opened.store,
      `select * from transactions where chain_id = 31337 and from_address = ${SENDER} and nonce = 7 and tx_hash = ${HASH}`,
    );
    expect(replacement).toContain("transactions_sender_nonce");
    const bundle = await planOf(
      opened.store,
      `select * from transactions where chain_id = 31337 and from_address = ${SENDER} and nonce in (7, 8) and tx_hash in (${HASH})`,
    );
    expect(bundle).toContain("transactions_sender_nonce");
    const source = await planOf(
      opened.store,
      `select * from transactions where transport_id = '0xabc' and tx_hash = ${HASH}`,
    );
    expect(source).toContain("transactions_transport_id");
  });

  it("keeps each bundle's nonces beside its hashes", async () => {
    const db = opened.store.db;
    await db
      .insertInto("call_bundles")
      .values({
        owner: "",
        id: "0x01",
        chain_id: 31337,
        from_address: "0x70997970c51812dc3a010c7901b1cfcccc3f7aa2",
        tx_hashes: "[]",
        tx_nonces: "[7]",
        calls: 1,
        error: null,
        created_at: 1,
      })
      .execute();
    const kept = await db.selectFrom("call_bundles").select("tx_nonces").executeTakeFirstOrThrow();
    expect(kept.tx_nonces).toBe("[7]");
  });
});
