/** Migration 028: the tracker's read of the last hour's drops goes through the partial index, and only drops are in it. */
import { expect, it } from "vitest";
import { planOf } from "../../test-support/query-plan.js";
import { describeEachStore, suiteStore } from "../../test-support/stores.js";

describeEachStore("the recent drops index (migration 028)", (target) => {
  const opened = suiteStore(target);

  it("serves the drop watch's read in time order without a sort", async () => {
    const plan = await planOf(
      opened.store,
      "select * from transactions where chain_id = 1001 and state = 'dropped' and updated_at >= 5 order by updated_at desc limit 500",
    );
    expect(plan).toContain("transactions_dropped");
    // SQLite names a sort "USE TEMP B-TREE FOR ORDER BY"; PostgreSQL a "Sort" node.
    expect(plan).not.toMatch(/TEMP B-TREE|Sort/);
  });
});
