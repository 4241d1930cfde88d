/** A token transport the destination refused is cancelled there and refunded at the source; these say how far that got. */
export const up = `
alter table transports add column refund_state text;
alter table transports add column refund_tx_hash text;
`;

export const down = `
alter table transports drop column refund_tx_hash;
alter table transports drop column refund_state;
`;
