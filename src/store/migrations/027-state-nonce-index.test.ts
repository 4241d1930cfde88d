/** Migration 027: the tracker's batch of one state is read in nonce order from the index, not sorted. */
import { expect, it } from "vitest";
import { planOf } from "../../test-support/query-plan.js";
import { describeEachStore, suiteStore } from "../../test-support/stores.js";

describeEachStore("the state index in nonce order (migration 027)", (target) => {
  const opened = suiteStore(target);

  it("serves the tracker's read of one state in nonce order without a sort", async () => {
    const plan = await planOf(
      opened.store,
      "select * from transactions where chain_id = 1001 and state in ('sent') order by nonce limit 500",
    );
    expect(plan).toContain("transactions_state");
    // SQLite names a sort "USE TEMP B-TREE FOR ORDER BY"; PostgreSQL a "Sort" node.
    expect(plan).not.toMatch(/TEMP B-TREE|Sort/);
  });
});
