/** Signed operations: the nonce ledger, every transaction chaingate signs, and idempotency keys. */
export const up = `
create table nonce_ledger (
  chain_id bigint not null, address text not null, next_nonce bigint not null,
  constraint nonce_ledger_pk primary key (chain_id, address)
);
create table transactions (
  id text primary key, kind text not null, chain_id bigint not null, wallet_id text,
  address_index integer, from_address text not null, to_address text, value text not null,
  data text not null, nonce bigint not null, gas_limit text not null, max_fee_per_gas text,
  max_priority_fee_per_gas text, gas_price text, raw text not null, tx_hash text not null,
  state text not null, replaced_by text, replaces text, block_number bigint, block_hash text,
  error text, revert_data text, broadcasts integer default 0 not null, metadata text, owner text,
  created_at bigint not null, updated_at bigint not null, sent_at bigint
);
create index transactions_hash on transactions (tx_hash);
create index transactions_state on transactions (state, chain_id);
create index transactions_sender_nonce on transactions (chain_id, from_address, nonce);
create index transactions_created on transactions (created_at, id);
create table idempotency_keys (
  route text not null, key text not null, request_hash text not null, status text not null,
  response_status integer, response_body text, created_at bigint not null,
  constraint idempotency_keys_pk primary key (route, key)
);
`;

export const down = `
drop table idempotency_keys;
drop table transactions;
drop table nonce_ledger;
`;
