/** Inserts one row of a fixed shape with the SQL Kysely compiled for that shape the first time: the hot write path skips building and compiling. */
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

export async function insertRow<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  row: Insertable<Database[T]>,
): Promise<void> {
  const columns = Object.keys(row);
  const values = columns.map((column) => (row as Record<string, unknown>)[column]);
  const adapter = db.getExecutor().adapter;
  let shapes = compiled.get(adapter);
  if (!shapes) {
    shapes = new Map();
    compiled.set(adapter, shapes);
  }
  const shape = `${table}(${columns.join(",")})`;
  const sql = shapes.get(shape);
  const allPlain = values.every((v) => v !== undefined && plain(v));
  if (sql && allPlain) {
    await db.executeQuery(CompiledQuery.raw(sql, values));
    return;
  }
  const query = db
    .insertInto(table)
    .values(row as never)
    .compile();
  if (sql === undefined && allPlain) {
    const same =
      query.parameters.length === values.length && query.parameters.every((p, i) => p === values[i]);
    // One compile is enough to know: a shape whose SQL cannot be reused is not tried again.
    shapes.set(shape, same ? query.sql : null);
  }
  await db.executeQuery(query);
}

/**
 * Inserts `rows` (all of one shape) in one statement: a group's rows of a table written once, not
 * once per request. Kysely compiles it (its SQL depends on the count); one compile a group is far
 * less than the statements it replaces.
 */
export async function insertRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  if (rows.length === 1) return insertRow(db, table, rows[0]!);
  await db
    .insertInto(table)
    .values(rows as never)
    .execute();
}
