/** Bytes signed by eth_signTransaction (handed out, not sent): the one payload each (chain, address, nonce) may carry. */
export const up = `
create table signed_payloads (
  chain_id integer not null, address text not null, nonce bigint not null, tx_hash text not null,
  raw text not null, created_at bigint not null,
  constraint signed_payloads_pk primary key (chain_id, address, nonce)
);
`;

export const down = `
drop table signed_payloads;
`;
