/** A store with history for a bench: many confirmed transactions already recorded, as a custody service holds after months. */
import SQLite from "better-sqlite3";
import pg from "pg";

/** Chain, senders and spacing of the rows written: 100 senders, each with its own run of nonces. */
const SENDERS = 100;

/** The columns written, in order; the values are built by each store's own SQL (no round trip a row). */
const COLUMNS =
  "id, kind, chain_id, from_address, to_address, value, data, nonce, gas_limit, max_fee_per_gas, " +
  "max_priority_fee_per_gas, raw, tx_hash, state, block_number, block_hash, broadcasts, created_at, updated_at, sent_at";

/**
 * Writes `count` confirmed transfers of chain `chainId` into a migrated store, with random hashes
 * (as real ones are) and times in the past, in batches of 50,000 a statement.
 */
export async function recordHistory(
  store: { kind: "sqlite"; path: string } | { kind: "postgres"; url: string },
  chainId: number,
  count: number,
): Promise<void> {
  const past = Date.now() - 86_400_000;
  const batch = 50_000;
  if (store.kind === "sqlite") {
    const db = new SQLite(store.path);
    db.pragma("busy_timeout = 10000");
    const insert = db.prepare(
      `with recursive n(i) as (select ? union all select i + 1 from n where i < ?)
       insert into transactions (${COLUMNS})
       select 'history-' || i, 'transfer', ${chainId}, printf('0x%040x', i % ${SENDERS}), '0x${"11".repeat(20)}',
         '1', '0x', i / ${SENDERS}, '21000', '2', '1', '0x02', '0x' || lower(hex(randomblob(32))), 'confirmed',
         i / ${SENDERS}, '0x' || lower(hex(randomblob(32))), 1, ${past} + i, ${past} + i, ${past} + i from n`,
    );
    for (let from = 1; from <= count; from += batch) insert.run(from, Math.min(count, from + batch - 1));
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    for (let from = 1; from <= count; from += batch)
      await client.query(
        `insert into transactions (${COLUMNS})
         select 'history-' || i, 'transfer', ${chainId}, '0x' || lpad(to_hex(i % ${SENDERS}), 40, '0'),
           '0x${"11".repeat(20)}', '1', '0x', i / ${SENDERS}, '21000', '2', '1', '0x02',
           '0x' || md5(random()::text) || md5(random()::text), 'confirmed', i / ${SENDERS},
           '0x' || md5(random()::text) || md5(random()::text), 1, ${past} + i, ${past} + i, ${past} + i
         from generate_series($1::bigint, $2::bigint) as i`,
        [from, Math.min(count, from + batch - 1)],
      );
  } finally {
    await client.end();
  }
}
