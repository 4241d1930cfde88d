/** Newest-first paging by (created_at, id) with an opaque cursor, shared by the listing operations. */
import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from "kysely";
import { invalidParams } from "../errors/rpc-errors.js";

export interface CursorPosition {
  created_at: number;
  id: string;
}

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as {
      c: unknown;
      i: unknown;
    };
    if (typeof parsed.c === "number" && typeof parsed.i === "string")
      return { created_at: parsed.c, id: parsed.i };
  } catch {
    // fall through
  }
  throw invalidParams("cursor is not one this service issued");
}

export function encodeCursor(last: CursorPosition): string {
  return Buffer.from(JSON.stringify({ c: last.created_at, i: last.id }), "utf8").toString("base64url");
}

/** Rows after the cursor in newest-first order (the table must have created_at and id). */
export function olderThan(after: CursorPosition): Expression<SqlBool> {
  return sql<SqlBool>`(created_at < ${after.created_at} or (created_at = ${after.created_at} and id < ${after.id}))`;
}

/**
 * Runs `query` as one page, newest first: rows after `cursor` (one this function issued), at most
 * `limit`, and the cursor of the next page (null on the last).
 */
export async function newestFirstPage<DB, TB extends keyof DB, Row extends CursorPosition>(
  query: SelectQueryBuilder<DB, TB, Row>,
  cursor: string | undefined,
  limit: number,
): Promise<{ page: Row[]; next: string | null }> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const rows = await (after === undefined ? query : query.where(olderThan(after)))
    .orderBy(sql.ref("created_at"), "desc")
    .orderBy(sql.ref("id"), "desc")
    .limit(limit + 1)
    .execute();
  return pageOf(rows, limit);
}

/** Cuts the limit+1 rows read into a page and the cursor of the next one. */
export function pageOf<Row extends CursorPosition>(
  rows: Row[],
  limit: number,
): { page: Row[]; next: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, next: rows.length > limit && last ? encodeCursor(last) : null };
}
