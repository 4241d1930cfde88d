/** Inserts rows of a fixed shape with the SQL Kysely compiled for that shape and count the first time: the hot write path skips building and compiling. */
import { CompiledQuery, type DialectAdapter, type Insertable, type Kysely } from "kysely";
import type { Database } from "./schema.js";

/**
 * Kysely builds and compiles every query anew (an immutable tree, frozen, then visited): for a
 * signed transaction's three inserts that was a tenth of the request's CPU. An insert of one row
 * compiles to the same SQL for the same table, columns and dialect, with the row's values as its
 * parameters in column order; that SQL is kept per dialect (the adapter of the Kysely instance,
 * shared by its transactions) and reused with the new values. A shape whose compiled parameters
 * are not exactly its values in order (a value that is an expression) is never kept: it is built
 * by Kysely every time.
 */
const compiled = new WeakMap<DialectAdapter, Map<string, string | null>>();

/** A value Kysely passes through as a parameter (an object may be an expression it would compile). */
const plain = (v: unknown) => v === null || typeof v !== "object" || v instanceof Uint8Array;

export function insertRow<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  row: Insertable<Database[T]>,
): Promise<void> {
  return insertRows(db, table, [row]);
}

/**
 * Inserts `rows` in one statement: a group's rows of a table written once, not once per request.
 * Rows of one shape (the same columns in the same order) use the SQL kept for that shape and count
 * (a group has at most MAX_GROUP rows, so a table keeps a few dozen at most); rows of mixed shapes
 * are built by Kysely, which fills what a row lacks with its default.
 */
export async function insertRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const key = columns.join(",");
  const oneShape = rows.every((row, i) => i === 0 || Object.keys(row).join(",") === key);
  const values = oneShape
    ? rows.flatMap((row) => columns.map((column) => (row as Record<string, unknown>)[column]))
    : [];
  const allPlain = oneShape && values.every((v) => v !== undefined && plain(v));
  const adapter = db.getExecutor().adapter;
  let shapes = compiled.get(adapter);
  if (!shapes) {
    shapes = new Map();
    compiled.set(adapter, shapes);
  }
  const shape = `${table}(${key})x${rows.length}`;
  const sql = allPlain ? shapes.get(shape) : null;
  if (sql) {
    await db.executeQuery(CompiledQuery.raw(sql, values));
    return;
  }
  const query = db
    .insertInto(table)
    .values((rows.length === 1 ? rows[0] : rows) as never)
    .compile();
  if (sql === undefined && allPlain) {
    const same =
      query.parameters.length === values.length && query.parameters.every((p, i) => p === values[i]);
    // One compile is enough to know: a shape whose SQL cannot be reused is not tried again.
    shapes.set(shape, same ? query.sql : null);
  }
  await db.executeQuery(query);
}
