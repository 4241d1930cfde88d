/** EIP-5792 call bundles: which transactions wallet_sendCalls sent for a tenant's bundle id. */
export const up = `
create table call_bundles (
  owner text not null, id text not null, chain_id integer not null, from_address text not null,
  tx_hashes text not null, calls integer not null, error text, created_at bigint not null,
  constraint call_bundles_pk primary key (owner, id)
);
`;

export const down = `
drop table call_bundles;
`;
