/** Spends carry the wallet and API key they were made under, so a policy's rolling limit can count its whole scope. */
export const up = `
alter table policy_spends add column wallet_id text;
alter table policy_spends add column api_key_id text;
create index policy_spends_wallet_window on policy_spends (wallet_id, asset, created_at);
create index policy_spends_key_window on policy_spends (api_key_id, asset, created_at);
`;

export const down = `
drop index policy_spends_key_window;
drop index policy_spends_wallet_window;
alter table policy_spends drop column api_key_id;
alter table policy_spends drop column wallet_id;
`;
