/** Custody wallets and their addresses (keystore v3 documents; nothing in clear). */
export const up = `
create table wallets (
  id text primary key, type text not null, source text not null, kdf text not null,
  sealed_seed text, address_count integer not null, failed_attempts integer default 0 not null,
  locked_until bigint default 0 not null, owner text, created_at bigint not null
);
create table wallet_addresses (
  wallet_id text not null references wallets (id) on delete cascade, idx integer not null,
  address text not null, public_key text not null, keystore text not null,
  created_at bigint not null, constraint wallet_addresses_pk primary key (wallet_id, idx)
);
create index wallet_addresses_address on wallet_addresses (address);
create index wallets_owner_created on wallets (owner, created_at);
`;

export const down = `
drop table wallet_addresses;
drop table wallets;
`;
