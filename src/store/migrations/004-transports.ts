/** Members (the registry's mirror of who registered what), transports and the relayer's scan cursors. */
export const up = `
create table members (
  registry text not null, member_id bigint not null, name text not null, tx_hash text not null,
  owner text, created_at bigint not null, constraint members_pk primary key (registry, member_id)
);
create table transports (
  id text primary key, kind text not null, with_data integer default 0 not null,
  source_chain_id bigint not null, destination_chain_id bigint not null, sender text not null,
  recipient text not null, token text, amount text, token_id text, payload_hash text, body text,
  state text not null, error text, source_tx_hash text, source_block bigint,
  destination_tx_hash text, search_from_block bigint, attempts integer default 0 not null,
  lease_owner text, lease_until bigint, owner text, created_at bigint not null,
  updated_at bigint not null, delivered_at bigint
);
create index transports_state on transports (state, lease_until);
create index transports_created on transports (created_at, id);
create table relayer_cursors (
  chain_id bigint not null, endpoint text not null, next_block bigint not null,
  updated_at bigint not null, constraint relayer_cursors_pk primary key (chain_id, endpoint)
);
`;

export const down = `
drop table relayer_cursors;
drop table transports;
drop table members;
`;
