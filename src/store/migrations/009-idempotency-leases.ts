/** An in-progress Idempotency-Key holds a lease; each signed transaction names the key it was signed under. */
export const up = `
alter table idempotency_keys add column lease_until bigint;
alter table transactions add column idempotency_ref text;
create index transactions_idempotency_ref on transactions (idempotency_ref);
`;

export const down = `
drop index transactions_idempotency_ref;
alter table transactions drop column idempotency_ref;
alter table idempotency_keys drop column lease_until;
`;
