/** Per-key slots held across instances (WebSockets) where a cap is smaller than the instances sharing it: a shared count, not a share each. */
export const up = `
create table held_slots (
  id text primary key, kind text not null, owner text not null, instance_id text not null,
  created_at bigint not null
);
-- The count a take makes: a key's slots of one kind.
create index held_slots_owner on held_slots (kind, owner);
`;

export const down = `
drop table held_slots;
`;
