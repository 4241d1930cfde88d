/** Resumable subscriptions: what a stream delivered lately, so a client may resume it on any instance. */
export const up = `
create table subscription_streams (
  id text primary key, owner text not null, chain_id integer not null, kind text not null,
  criteria text not null,
  -- JSON: the blocks delivered lately, newest last ({n, h, logs?}), for reorgs across a resume.
  recent text not null, created_at bigint not null, updated_at bigint not null
);
create index subscription_streams_updated on subscription_streams (updated_at);
`;

export const down = `
drop table subscription_streams;
`;
