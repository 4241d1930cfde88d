/** Keys of unattended wallets, sealed under the operator's server key (which is never stored here). */
export const up = `
create table unattended_keys (
  wallet_id text not null, idx integer not null, address text not null, sealed text not null,
  key_id text not null, created_at bigint not null,
  constraint unattended_keys_pk primary key (wallet_id, idx)
);
create index unattended_keys_address on unattended_keys (address);
`;

export const down = `
drop table unattended_keys;
`;
