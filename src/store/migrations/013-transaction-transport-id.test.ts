import SQLite from "better-sqlite3";
import { Kysely, type MigrationProvider, Migrator, SqliteDialect } from "kysely";
import { afterAll, expect, it } from "vitest";
import type { Database, TransactionsTable } from "../schema.js";
import { MIGRATIONS } from "./index.js";

const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(":memory:") }) });
const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };
afterAll(() => db.destroy());

const row = (
  id: string,
  metadata: string | null,
): Omit<TransactionsTable, "transport_id" | "trace_parent"> => ({
  id,
  kind: "transport_delivery",
  chain_id: 1002,
  wallet_id: null,
  address_index: null,
  from_address: "0x01",
  to_address: "0x02",
  value: "0",
  data: "0x",
  nonce: Number(id),
  gas_limit: "21000",
  max_fee_per_gas: null,
  max_priority_fee_per_gas: null,
  gas_price: "1",
  raw: "0x",
  tx_hash: `0x${id}`,
  state: "sent",
  replaced_by: null,
  replaces: null,
  block_number: null,
  block_hash: null,
  error: null,
  revert_data: null,
  broadcasts: 1,
  metadata,
  owner: null,
  created_at: 0,
  updated_at: 0,
  sent_at: null,
  idempotency_ref: null,
});

it("moves the transport id of rows written before the column out of their metadata", async () => {
  const migrator = new Migrator({ db, provider });
  expect((await migrator.migrateTo("012-transport-revert-data")).error).toBeUndefined();
  await db
    .insertInto("transactions")
    .values([
      row("1", JSON.stringify({ transport_id: "0xabc", source_chain_id: 1001 })),
      row("2", JSON.stringify({ token: "0xdef" })),
      row("3", null),
    ] as TransactionsTable[])
    .execute();
  expect((await migrator.migrateToLatest()).error).toBeUndefined();
  const ids = await db.selectFrom("transactions").select(["id", "transport_id"]).orderBy("id").execute();
  expect(ids).toEqual([
    { id: "1", transport_id: "0xabc" },
    { id: "2", transport_id: null },
    { id: "3", transport_id: null },
  ]);
});
