/** Signing policies with their rolling spends, the append-only audit log, and the webhook outbox. */
export const up = `
create table policies (
  id text primary key, name text not null, wallet_id text, api_key_id text, rules text not null,
  created_by text, created_at bigint not null
);
create index policies_wallet on policies (wallet_id);
create index policies_api_key on policies (api_key_id);
create table policy_spends (
  id text primary key, chain_id integer not null, address text not null, asset text not null,
  amount text not null, tx_id text, created_at bigint not null
);
create index policy_spends_window on policy_spends (chain_id, address, asset, created_at);
create table audit_log (
  id text primary key, created_at bigint not null, api_key_id text, wallet_id text, address text,
  chain_id integer, operation text not null, to_address text, value text, token text,
  token_amount text, selector text, decision text not null, rule text, policy_id text,
  tx_hash text, detail text
);
create index audit_log_time on audit_log (created_at, id);
create index audit_log_key on audit_log (api_key_id, created_at);
create table webhooks (
  id text primary key, owner text, url text not null, events text not null, secret text not null,
  created_at bigint not null
);
create index webhooks_owner on webhooks (owner);
create table webhook_events (
  id text primary key, owner text, type text not null, data text not null,
  order_key text not null, order_seq integer not null, created_at bigint not null
);
create index webhook_events_order on webhook_events (order_key, order_seq);
create table webhook_deliveries (
  id text primary key, webhook_id text not null, event_id text not null, order_key text not null,
  order_seq integer not null, state text not null, attempts integer not null,
  next_attempt_at bigint not null, lease_owner text, lease_until bigint, last_status integer,
  last_error text, created_at bigint not null, delivered_at bigint
);
create index webhook_deliveries_due on webhook_deliveries (state, next_attempt_at);
create index webhook_deliveries_order on webhook_deliveries (webhook_id, order_key, order_seq);
create table balance_alerts (
  wallet_id text not null, chain_id integer not null, below text not null, owner text,
  created_at bigint not null, constraint balance_alerts_pk primary key (wallet_id, chain_id)
);
create table balance_alert_state (
  wallet_id text not null, chain_id integer not null, address text not null,
  low integer not null,
  constraint balance_alert_state_pk primary key (wallet_id, chain_id, address)
);
`;

export const down = `
drop table balance_alert_state;
drop table balance_alerts;
drop table webhook_deliveries;
drop table webhook_events;
drop table webhooks;
drop table audit_log;
drop table policy_spends;
drop table policies;
`;
