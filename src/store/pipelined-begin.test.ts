/** PostgreSQL: a transaction's begin goes on the wire with its first statement (one round trip), and every way a transaction ends still holds. */
import { CompiledQuery, Kysely, PostgresDialect, sql, type Transaction } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_AVAILABLE, type TempStore, tempStore } from "../test-support/stores.js";
import { openStore, postgresPool } from "./database.js";
import { GroupCommit, LastStatement } from "./group-commit.js";
import { ResilientDialect } from "./resilient-dialect.js";
import type { Database } from "./schema.js";

type Query = (config: unknown, values?: unknown) => unknown;

describe.skipIf(!POSTGRES_AVAILABLE)("a pipelined begin [postgres]", () => {
  let temp: TempStore;
  let db: Kysely<Database>;
  /** What each connection sent and heard, in order: "sent <sql>", "answered <sql>". */
  const wire: string[] = [];

  beforeAll(async () => {
    temp = await tempStore("postgres");
    // The schema, as the service opens it.
    await (await openStore(temp.location)).close();
    const url = temp.location.kind === "postgres" ? temp.location.url : "";
    const pool = postgresPool(url, () => {});
    pool.on("connect", (client: pg.PoolClient) => {
      const query = client.query.bind(client) as Query;
      const traced: Query = (config, values) => {
        const text = typeof config === "string" ? config : "(other)";
        wire.push(`sent ${text}`);
        const answer = query(config, values) as Promise<unknown>;
        answer.then(
          () => wire.push(`answered ${text}`),
          () => wire.push(`failed ${text}`),
        );
        return answer;
      };
      client.query = traced as typeof client.query;
    });
    db = new Kysely<Database>({ dialect: new ResilientDialect(new PostgresDialect({ pool }), true) });
  });

  afterAll(async () => {
    await db?.destroy();
    await temp?.drop();
  });

  it("the first statement is sent before the begin is answered, and the transaction commits", async () => {
    wire.length = 0;
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("instances").values({ id: "pipelined", started_at: 1, seen_at: 2 }).execute();
    });
    const sentInsert = wire.findIndex((e) => e.startsWith('sent insert into "instances"'));
    expect(wire[0]).toBe("sent begin");
    expect(sentInsert).toBeGreaterThan(0);
    expect(sentInsert).toBeLessThan(wire.indexOf("answered begin"));
    const rows = await db.selectFrom("instances").select("id").where("id", "=", "pipelined").execute();
    expect(rows).toEqual([{ id: "pipelined" }]);
  });

  it("a first statement that fails rolls the transaction back, and the connection serves the next one", async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`select 1 / 0`.execute(trx);
      }),
    ).rejects.toThrow(/division by zero/);
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto("instances").values({ id: "after-fail", started_at: 1, seen_at: 2 }).execute();
        await sql`select 1 / 0`.execute(trx);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await db.selectFrom("instances").select("id").where("id", "=", "after-fail").execute()).toEqual(
      [],
    );
    const { rows } = await db
      .transaction()
      .execute((trx) => sql<{ one: number }>`select 1 as one`.execute(trx));
    expect(rows).toEqual([{ one: 1 }]);
  });

  it("a transaction that runs no statement commits, and one that throws before any rolls back", async () => {
    await db.transaction().execute(async () => {});
    await expect(
      db.transaction().execute(async () => {
        throw new Error("before any statement");
      }),
    ).rejects.toThrow("before any statement");
    // Neither left a transaction open on its connection.
    const { rows } = await sql<{ open: boolean }>`select now() <> statement_timestamp() as open`.execute(db);
    expect(rows).toEqual([{ open: false }]);
  });

  it("a lone group job's commit is sent behind its last statement, unanswered; when that statement fails nothing is committed", async () => {
    const group = new GroupCommit(db, 1, { pipelinedCommit: true });
    const job = (id: string, last: string) => async (trx: Transaction<Database>) => {
      await trx.insertInto("instances").values({ id, started_at: 1, seen_at: 2 }).execute();
      return LastStatement.send(trx, CompiledQuery.raw(last));
    };
    wire.length = 0;
    await group.run(job("last-ok", "select pg_sleep(0.05)"));
    expect(wire.indexOf("sent commit")).toBeGreaterThan(wire.indexOf("sent select pg_sleep(0.05)"));
    expect(wire.indexOf("sent commit")).toBeLessThan(wire.indexOf("answered select pg_sleep(0.05)"));
    // A statement that fails aborts the transaction: PostgreSQL answers the commit with a rollback
    // (no error), and the job hears the statement's own error.
    wire.length = 0;
    await expect(group.run(job("last-failed", "select 1 / 0"))).rejects.toThrow(/division by zero/);
    expect(wire.indexOf("sent commit")).toBeLessThan(wire.indexOf("failed select 1 / 0"));
    const kept = await db
      .selectFrom("instances")
      .select("id")
      .where("id", "in", ["last-ok", "last-failed"])
      .execute();
    expect(kept).toEqual([{ id: "last-ok" }]);
    await group.drain();
  });

  it("a transaction with an isolation level begins as before, and reads what it wrote", async () => {
    const seen = await db
      .transaction()
      .setIsolationLevel("serializable")
      .execute(async (trx) => {
        await trx.insertInto("instances").values({ id: "serializable", started_at: 1, seen_at: 2 }).execute();
        return trx.selectFrom("instances").select("id").where("id", "=", "serializable").execute();
      });
    expect(seen).toEqual([{ id: "serializable" }]);
  });
});
