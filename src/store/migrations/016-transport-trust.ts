/** What the relayer learnt before moving value: the quorum-confirmed source block, when to look again, and per-lane limits. */
export const up = `
-- The source block's hash as a quorum of upstreams confirmed it, and how many did.
alter table transports add column source_block_hash text;
alter table transports add column source_confirmations integer;
-- A held transport (disputed, reorged, queued on its lane) is looked at again from this time.
alter table transports add column next_check_at bigint;
-- Queued on a lane limit: delivered from release_at; refunded at refund_at when that comes first.
alter table transports add column release_at bigint;
alter table transports add column refund_at bigint;
create table lane_limits (
  source_chain_id integer not null, destination_chain_id integer not null, token text not null,
  -- Decimal strings in the token's base units (ERC721: token count).
  capacity text not null, period_ms bigint not null, refund_after_ms bigint,
  -- The bucket: what may still cross now (negative while queued transports wait), as of level_at.
  level text not null, level_at bigint not null,
  created_by text, created_at bigint not null, updated_at bigint not null,
  constraint lane_limits_pk primary key (source_chain_id, destination_chain_id, token)
);
`;

export const down = `
drop table lane_limits;
alter table transports drop column refund_at;
alter table transports drop column release_at;
alter table transports drop column next_check_at;
alter table transports drop column source_confirmations;
alter table transports drop column source_block_hash;
`;
