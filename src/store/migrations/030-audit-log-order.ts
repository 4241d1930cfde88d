/** The audit log keeps one order, (created_at, id), and no primary key beside it (decision 212). */
/**
 * Nothing reads an audit entry by its id: the log is listed newest first by (created_at, id), or
 * by API key. Yet every entry wrote four b-trees on SQLite (the table, its primary key's own index,
 * audit_log_time, audit_log_key) and three on PostgreSQL: one page of the ten a lone send's commit
 * wrote on SQLite was the primary key's. The table is rebuilt (SQLite cannot drop a primary key in
 * place) with audit_log_time unique, so (created_at, id) still names one entry and the list's
 * cursor still finds its place; entries keep their ids and order.
 */
const COLUMNS =
  "id, created_at, api_key_id, wallet_id, address, chain_id, operation, to_address, value, token, token_amount, selector, decision, rule, policy_id, tx_hash, detail";

const table = (name: string, key: string) => `
create table ${name} (
  id text ${key}, created_at bigint not null, api_key_id text, wallet_id text, address text,
  chain_id integer, operation text not null, to_address text, value text, token text,
  token_amount text, selector text, decision text not null, rule text, policy_id text,
  tx_hash text, detail text
)`;

export const up = `
${table("audit_log_ordered", "not null")};
insert into audit_log_ordered (${COLUMNS}) select ${COLUMNS} from audit_log;
drop table audit_log;
alter table audit_log_ordered rename to audit_log;
create unique index audit_log_time on audit_log (created_at, id);
create index audit_log_key on audit_log (api_key_id, created_at);
`;

export const down = `
${table("audit_log_keyed", "primary key")};
insert into audit_log_keyed (${COLUMNS}) select ${COLUMNS} from audit_log;
drop table audit_log;
alter table audit_log_keyed rename to audit_log;
create index audit_log_time on audit_log (created_at, id);
create index audit_log_key on audit_log (api_key_id, created_at);
`;
