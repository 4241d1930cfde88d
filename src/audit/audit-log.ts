/** The append-only audit log: every signing decision and every policy or key change, newest first when read. */
import type { Kysely } from "kysely";
import { newestFirstPage } from "../store/cursor-page.js";
import type { Store } from "../store/database.js";
import { type InsertPart, insertRow } from "../store/insert-row.js";
import { toJsonText } from "../store/json-text.js";
import { rowId } from "../store/row-id.js";
import type { AuditDecision, AuditLogTable, Database } from "../store/schema.js";

/** One entry as it is written: only the operation and the decision are always known. */
export interface AuditEntry {
  apiKeyId: string | null;
  operation: string;
  decision: AuditDecision;
  walletId?: string | null;
  address?: string | null;
  chainId?: number | null;
  to?: string | null;
  value?: bigint | null;
  token?: string | null;
  tokenAmount?: bigint | null;
  selector?: string | null;
  rule?: string | null;
  policyId?: string | null;
  txHash?: string | null;
  detail?: Record<string, unknown> | null;
}

export interface AuditRecord {
  id: string;
  created_at: string;
  api_key_id: string | null;
  wallet_id: string | null;
  address: string | null;
  chain_id: number | null;
  operation: string;
  to: string | null;
  value: string | null;
  token: string | null;
  token_amount: string | null;
  selector: string | null;
  decision: AuditDecision;
  rule: string | null;
  policy_id: string | null;
  tx_hash: string | null;
  detail: unknown;
}

export interface AuditFilter {
  api_key_id?: string;
  wallet_id?: string;
  address?: string;
  chain_id?: number;
  operation?: string;
  decision?: AuditDecision;
  /** Epoch milliseconds, inclusive. */
  since?: number;
  until?: number;
  limit?: number;
  cursor?: string;
}

/** Writes one entry with `db`, which may be the transaction of the change it records. */
export async function appendAudit(db: Kysely<Database>, entry: AuditEntry, now = Date.now()): Promise<void> {
  await insertRow(db, "audit_log", auditRow(entry, now));
}

/** The rows of several entries, for the caller to write with its own (a joined record's, see tx/record-together.ts). */
export function auditRows(entries: readonly AuditEntry[], now = Date.now()): InsertPart<"audit_log"> {
  return { table: "audit_log", rows: entries.map((entry) => auditRow(entry, now)) };
}

function auditRow(entry: AuditEntry, now: number): AuditLogTable {
  return {
    id: rowId(now),
    created_at: now,
    api_key_id: entry.apiKeyId,
    wallet_id: entry.walletId ?? null,
    address: entry.address?.toLowerCase() ?? null,
    chain_id: entry.chainId ?? null,
    operation: entry.operation,
    to_address: entry.to?.toLowerCase() ?? null,
    value: entry.value === undefined || entry.value === null ? null : entry.value.toString(),
    token: entry.token?.toLowerCase() ?? null,
    token_amount:
      entry.tokenAmount === undefined || entry.tokenAmount === null ? null : entry.tokenAmount.toString(),
    selector: entry.selector ?? null,
    decision: entry.decision,
    rule: entry.rule ?? null,
    policy_id: entry.policyId ?? null,
    tx_hash: entry.txHash ?? null,
    detail: entry.detail ? toJsonText(entry.detail) : null,
  };
}

const toRecord = (row: AuditLogTable): AuditRecord => ({
  id: row.id,
  created_at: new Date(Number(row.created_at)).toISOString(),
  api_key_id: row.api_key_id,
  wallet_id: row.wallet_id,
  address: row.address,
  chain_id: row.chain_id,
  operation: row.operation,
  to: row.to_address,
  value: row.value,
  token: row.token,
  token_amount: row.token_amount,
  selector: row.selector,
  decision: row.decision,
  rule: row.rule,
  policy_id: row.policy_id,
  tx_hash: row.tx_hash,
  detail: row.detail === null ? null : JSON.parse(row.detail),
});

/** A page of entries, newest first; `onlyKey` (a user key's own id) restricts it to that key's entries. */
export async function listAudit(
  store: Store,
  filter: AuditFilter,
  onlyKey: string | null | undefined,
): Promise<{ entries: AuditRecord[]; next_cursor: string | null }> {
  const query = store.db
    .selectFrom("audit_log")
    .selectAll()
    .$if(onlyKey !== undefined, (q) =>
      onlyKey === null ? q.where("api_key_id", "is", null) : q.where("api_key_id", "=", onlyKey!),
    )
    .$if(filter.api_key_id !== undefined, (q) => q.where("api_key_id", "=", filter.api_key_id!))
    .$if(filter.wallet_id !== undefined, (q) => q.where("wallet_id", "=", filter.wallet_id!))
    .$if(filter.address !== undefined, (q) => q.where("address", "=", filter.address!.toLowerCase()))
    .$if(filter.chain_id !== undefined, (q) => q.where("chain_id", "=", filter.chain_id!))
    .$if(filter.operation !== undefined, (q) => q.where("operation", "=", filter.operation!))
    .$if(filter.decision !== undefined, (q) => q.where("decision", "=", filter.decision!))
    .$if(filter.since !== undefined, (q) => q.where("created_at", ">=", filter.since!))
    .$if(filter.until !== undefined, (q) => q.where("created_at", "<=", filter.until!));
  const { page, next } = await newestFirstPage(query, filter.cursor, filter.limit ?? 100);
  return { entries: page.map(toRecord), next_cursor: next };
}
