/** The transactions' idempotency and transport columns are empty for most rows: their indexes keep only the rows that have one. */
/**
 * Every signed transaction was entered in both indexes, though only requests sent with an
 * Idempotency-Key and transport legs have a value there (#17): two more B-trees written per row,
 * and more pages per commit. The lookups are equalities (`idempotency_ref = ?`, `transport_id = ?`),
 * which both SQLite and PostgreSQL know to imply `IS NOT NULL`, so they still use the indexes.
 */
export const up = `
drop index transactions_idempotency_ref;
create index transactions_idempotency_ref on transactions (idempotency_ref) where idempotency_ref is not null;
drop index transactions_transport_id;
create index transactions_transport_id on transactions (transport_id, chain_id) where transport_id is not null;
`;

export const down = `
drop index transactions_idempotency_ref;
create index transactions_idempotency_ref on transactions (idempotency_ref);
drop index transactions_transport_id;
create index transactions_transport_id on transactions (transport_id, chain_id);
`;
