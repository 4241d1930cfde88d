/** Gateway-owned filters. */
export const up = `
create table filters (
  id text primary key, chain_id bigint not null, kind text not null, criteria text,
  cursor_block bigint not null, cursor_hash text, node_filter_id text,
  created_at bigint not null, last_poll_at bigint not null
);
create index filters_last_poll_at on filters (last_poll_at);
`;

export const down = `
drop table filters;
`;
