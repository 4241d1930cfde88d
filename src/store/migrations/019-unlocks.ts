/** Unlocks as cluster state: every instance on the store signs for an unlocked address until it ends, and a lock ends it everywhere. */
export const up = `
create table unlocks (
  -- The tenant ('' in keyless mode) and the address (lower case).
  owner text not null, address text not null, wallet_id text not null, idx integer not null,
  -- The private key sealed under the server key, bound to owner, address and end; null without a
  -- server key (the row then only tells other instances that a lock must reach them).
  sealed text, key_id text, until bigint not null, created_at bigint not null,
  constraint unlocks_pk primary key (owner, address)
);
create index unlocks_wallet on unlocks (wallet_id);
`;

export const down = `
drop table unlocks;
`;
