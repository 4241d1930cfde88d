/** No index on a transaction's hash: every lookup by hash goes through an index a send writes in order (decision 204). */
/**
 * A transaction hash is random, so its index took a random leaf for every record: in a group
 * commit of 32 sends, 30-37 of some 70 pages written were that index's (decision 204). The lookups
 * it served each know more than the hash, and use the indexes every send writes anyway:
 * - a fee bump or a cancel shares its sender and nonce with what it replaced: `replaced_by` is
 *   followed through `transactions_sender_nonce` (chain, sender, nonce);
 * - a transport's source transaction carries its transport id: `transactions_transport_id`;
 * - an EIP-5792 bundle keeps its calls' nonces beside their hashes (`tx_nonces`, new here): again
 *   `transactions_sender_nonce`. A bundle recorded before this migration has none, and is read by
 *   sender (the same index's prefix).
 */
export const up = `
drop index transactions_hash;
alter table call_bundles add column tx_nonces text;
`;

export const down = `
alter table call_bundles drop column tx_nonces;
create index transactions_hash on transactions (tx_hash);
`;
