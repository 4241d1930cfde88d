/** Dropped transactions by chain and time: the tracker reads the last hour's drops every pass, and only they are in the index. */
/**
 * The tracker's pass reads the records of one chain dropped in the last hour (`where chain_id = ?
 * and state = 'dropped' and updated_at >= ?`, decision 193) to follow their own receipts. Through the
 * state index that read walks every dropped row the chain ever had, each pass. A partial index holds
 * the dropped rows only, keyed by time, so the read stops at the hour's edge. Rows in any other state
 * are not in it: inserts and the moves of a send's life (queued, sent, mined, confirmed) write
 * nothing more.
 */
export const up = `
create index transactions_dropped on transactions (chain_id, updated_at) where state = 'dropped';
`;

export const down = `
drop index transactions_dropped;
`;
