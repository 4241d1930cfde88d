/** Hot statements run by name on PostgreSQL: parsed once per connection, refused when their result comes from `*`, unharmed by a newer instance's added column. */
import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachStore, suiteStore } from "../test-support/stores.js";
import { nameStatement, statementName } from "./named-statements.js";
import { PreparedQuery } from "./prepared-query.js";

const SEEN = new PreparedQuery((db, slot) =>
  db.selectFrom("instances").select(["id", "seen_at"]).where("started_at", "=", slot<number>(0)),
);

it("a statement whose result columns come from * is refused; one that lists them is named", () => {
  expect(() => nameStatement('select * from "policies" where "wallet_id" = $1')).toThrow(
    /list its result columns/,
  );
  expect(() => nameStatement('update "transactions" set "state" = $1 returning *')).toThrow(
    /list its result columns/,
  );
  const listed = 'select "id" from "policies" where "wallet_id" = $1 -- named-statements.test';
  nameStatement(listed);
  expect(statementName(listed)).toMatch(/^cg_\d+$/);
  expect(statementName('select "id" from "policies" -- never marked')).toBeUndefined();
});

describeEachStore("named statements", (target) => {
  const opened = suiteStore(target);

  it.runIf(target === "postgres")(
    "a marked statement is prepared on its connection once, and an unmarked one is not",
    async () => {
      await opened.store.db.transaction().execute(async (trx) => {
        await SEEN.execute(trx, [1]);
        await SEEN.execute(trx, [2]);
        await sql`select ${"unmarked"}::text as probe`.execute(trx);
        const prepared = await sql<{ name: string; statement: string }>`
          select name, statement from pg_prepared_statements`.execute(trx);
        const mine = prepared.rows.filter((r) => r.statement === SEEN.query(trx, [1]).sql);
        expect(mine).toHaveLength(1);
        expect(mine[0]!.name).toBe(statementName(mine[0]!.statement));
        expect(prepared.rows.some((r) => r.statement.includes("probe"))).toBe(false);
      });
    },
  );

  it("a named statement still runs after a column is added to its table (a newer instance's migration)", async () => {
    await opened.store.db
      .insertInto("instances")
      .values({ id: "named-1", started_at: 77, seen_at: 78 })
      .execute();
    const run = () =>
      opened.store.db.transaction().execute(async (trx) => (await SEEN.execute(trx, [77])).rows);
    expect(await run()).toEqual([{ id: "named-1", seen_at: 78 }]);
    await sql`alter table instances add column named_statements_probe integer`.execute(opened.store.db);
    try {
      // Every pooled connection that prepared it runs it again, now against the new table.
      for (let i = 0; i < 12; i++) expect(await run()).toEqual([{ id: "named-1", seen_at: 78 }]);
    } finally {
      await sql`alter table instances drop column named_statements_probe`.execute(opened.store.db);
    }
  });
});

// Last in the file: it fills this process's registry.
it("past the cap of named statements a marked text runs unnamed, and the earlier names stay", () => {
  const first = 'select "id" from "webhooks" -- cap test, first';
  nameStatement(first);
  const name = statementName(first);
  for (let i = 0; i < 600; i++)
    nameStatement(`select "id" from "webhooks" where "owner" = $1 -- cap test ${i}`);
  expect(statementName('select "id" from "webhooks" where "owner" = $1 -- cap test 599')).toBeUndefined();
  expect(statementName(first)).toBe(name);
  const named = Array.from({ length: 600 }, (_, i) =>
    statementName(`select "id" from "webhooks" where "owner" = $1 -- cap test ${i}`),
  ).filter((n) => n !== undefined);
  expect(new Set(named).size).toBe(named.length);
  expect(named.length).toBeLessThan(500);
});
