/** The live instances on a shared store (a heartbeat each): per-key limits are divided among them. */
export const up = `
create table instances (
  id text primary key, started_at bigint not null, seen_at bigint not null
);
`;

export const down = `
drop table instances;
`;
