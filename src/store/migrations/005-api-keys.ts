/** API keys: only a SHA-256 of each key is kept, with its role and whether it was revoked. */
export const up = `
create table api_keys (
  id text primary key, name text not null, role text not null, key_hash text not null unique,
  created_at bigint not null, revoked_at bigint
);
`;

export const down = `
drop table api_keys;
`;
