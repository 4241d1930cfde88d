/** A LIMIT written into a statement's SQL rather than bound: SQLite compiles a statement again on every run whose LIMIT is a bound parameter. */
import { type RawBuilder, sql } from "kysely";

/**
 * SQLite's planner (3.53 here) reads a bound LIMIT's value while planning, and marks the statement
 * to be compiled again whenever that parameter is bound anew, which is every run: a cached
 * statement with `limit ?` was parsed and planned each time (seen with a uprobe on `sqlite3Prepare`,
 * decision 186). A constant row count belongs in the SQL; a row count that varies per call stays a
 * parameter. The count is checked here because it is written into the SQL.
 */
export function fixedLimit(rows: number): RawBuilder<number> {
  if (!Number.isSafeInteger(rows) || rows < 0)
    throw new RangeError(`a fixed LIMIT is a whole number of rows, not ${String(rows)}`);
  return sql.lit(rows);
}
