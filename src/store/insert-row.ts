/** Inserts rows of a fixed shape with the SQL Kysely compiled for that shape and count the first time: the hot write path skips building and compiling. */
import { CompiledQuery, type DialectAdapter, type Insertable, type Kysely } from "kysely";
import { onPostgres } from "./dialect.js";
import { nameStatement } from "./named-statements.js";
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
const compiled = new WeakMap<DialectAdapter, Map<string, Map<number, Shape[]>>>();

/** A value Kysely passes through as a parameter (an object may be an expression it would compile). */
const plain = (v: unknown) => v === null || typeof v !== "object" || v instanceof Uint8Array;

export function insertRow<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  row: Insertable<Database[T]>,
): Promise<void> {
  return insertRows(db, table, [row]);
}

/** Inserts `rows` in one statement: a group's rows of a table written once, not once per request. */
export async function insertRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.executeQuery(insertOf(db, table, rows).query);
}

/** Rows of one table, for `insertRowsTogether`. */
export interface InsertPart<T extends keyof Database & string = keyof Database & string> {
  table: T;
  rows: readonly Insertable<Database[T]>[];
}

/**
 * Inserts the rows of several tables: on PostgreSQL in one statement (each insert a data-modifying
 * WITH clause, so a group pays one round trip, not one a table), elsewhere one statement a table,
 * in order. Either way they are written in the caller's transaction, all or none. `then`, a read
 * that needs none of the rows, rides in the same statement on PostgreSQL as its main query (it sees
 * the transaction as it was before the inserts, as PostgreSQL runs a statement's WITH clauses on
 * one snapshot), elsewhere it runs after them; its rows are answered.
 */
export async function insertRowsTogether<R = never>(
  db: Kysely<Database>,
  parts: readonly InsertPart[],
  then?: CompiledQuery<R>,
): Promise<R[]> {
  const inserts = insertsOf(db, parts);
  const one = oneStatement(db, inserts, then);
  if (one) return (await db.executeQuery(one)).rows;
  for (const insert of inserts) await db.executeQuery(insert.query);
  return then ? (await db.executeQuery(then)).rows : [];
}

/**
 * The rows of `parts` as one statement (as `insertRowsTogether` would run them), or undefined
 * where they take several: SQLite, or a value that compiles to SQL.
 */
export function insertRowsStatement(
  db: Kysely<Database>,
  parts: readonly InsertPart[],
): CompiledQuery<never> | undefined {
  return oneStatement<never>(db, insertsOf(db, parts), undefined);
}

type Insert = ReturnType<typeof insertOf>;

const insertsOf = (db: Kysely<Database>, parts: readonly InsertPart[]): Insert[] =>
  parts.filter((p) => p.rows.length > 0).map((p) => insertOf(db, p.table, p.rows));

function oneStatement<R>(
  db: Kysely<Database>,
  inserts: readonly Insert[],
  then: CompiledQuery<R> | undefined,
): CompiledQuery<R> | undefined {
  const statements: CompiledQuery<unknown>[] = inserts.map((i) => i.query);
  if (then) statements.push(then);
  if (statements.length === 1) return statements[0] as CompiledQuery<R>;
  if (statements.length === 0 || !onPostgres(db) || inserts.some((i) => !i.plain)) return undefined;
  const parameters: unknown[] = [];
  for (const query of statements) parameters.push(...query.parameters);
  return CompiledQuery.raw(combinedSql(statements), parameters) as CompiledQuery<R>;
}

/**
 * Combined statements already written, by their parts' SQL in order (a trie of maps). A group's
 * parts are the kept shapes' SQL, the same string objects each time, so a lookup hashes nothing
 * anew; the combined text was rebuilt for every group (renumbering a few hundred placeholders),
 * and, a new string each time, compared in full by every map and by pg that met it (1.5% and 0.4%
 * of the event loop's busy time in a PostgreSQL burst). Bounded as the named statements are.
 */
interface Combined {
  /** The combined text, and the parts' parameter counts it was numbered for. */
  sql?: string;
  counts?: readonly number[];
  next: Map<string, Combined>;
}
const combinedRoot: Combined = { next: new Map() };
let combinedCount = 0;
export const MAX_COMBINED = 500;

function combinedSql(statements: readonly CompiledQuery<unknown>[]): string {
  let node = combinedRoot;
  for (const { sql } of statements) {
    let next = node.next.get(sql);
    if (next === undefined) {
      if (combinedCount >= MAX_COMBINED) return writeCombined(statements);
      next = { next: new Map() };
      node.next.set(sql, next);
    }
    node = next;
  }
  if (node.sql === undefined) {
    node.sql = writeCombined(statements);
    node.counts = statements.map((q) => q.parameters.length);
    combinedCount++;
  }
  // Kysely's SQL holds one placeholder a parameter, so the text fixes the counts; checked all the same.
  if (node.counts!.some((count, i) => count !== statements[i]!.parameters.length))
    return writeCombined(statements);
  return node.sql;
}

/** How many combined statements are kept (for tests: at most MAX_COMBINED). */
export function combinedStatementsKept(): number {
  return combinedCount;
}

/** The statements as one: each but the last a data-modifying WITH clause, their placeholders numbered on. */
function writeCombined(statements: readonly CompiledQuery<unknown>[]): string {
  const clauses: string[] = [];
  let offset = 0;
  for (const query of statements) {
    // The SQL is Kysely's for plain rows (or a compiled read): quoted identifiers and $n
    // placeholders, no literal that could hold a "$" (a value that would have compiled to SQL
    // makes the shape not plain).
    const at = offset;
    clauses.push(at === 0 ? query.sql : query.sql.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + at}`));
    offset += query.parameters.length;
  }
  const last = clauses.pop()!;
  const sql = `with ${clauses.map((c, i) => `w${i} as (${c})`).join(", ")} ${last}`;
  nameStatement(sql);
  return sql;
}

/** Whether `row` has exactly `columns`, in that order (compared name by name: no joined string a row). */
function sameColumns(row: object, columns: readonly string[]): boolean {
  return sameNames(Object.keys(row), columns);
}

/**
 * The insert of `rows` into `table`: SQL kept for rows of one shape (the same columns in the same
 * order; a group has at most MAX_GROUP rows, so a table keeps a few dozen at most), built by Kysely
 * otherwise (rows of mixed shapes, which it fills with defaults, or a value that is an expression).
 * `plain` says its parameters are exactly the rows' values, in order.
 */
function insertOf<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): { query: CompiledQuery; plain: boolean } {
  const columns = Object.keys(rows[0]!);
  const { values, allPlain } = valuesOf(rows, columns);
  const shapes = shapesOf(db.getExecutor().adapter, table, rows.length);
  const kept = allPlain ? shapes.find((s) => sameNames(s.columns, columns)) : undefined;
  if (kept?.sql) return { query: CompiledQuery.raw(kept.sql, values), plain: true };
  const query = db
    .insertInto(table)
    .values((rows.length === 1 ? rows[0] : rows) as never)
    .compile();
  let same = false;
  if (allPlain) {
    same = query.parameters.length === values.length && query.parameters.every((p, i) => p === values[i]);
    // One compile is enough to know: a shape whose SQL cannot be reused is not tried again.
    if (kept === undefined) {
      shapes.push({ columns, sql: same ? query.sql : null });
      if (same) nameStatement(query.sql);
    }
  }
  return { query, plain: same };
}

/**
 * The rows' values in column order, when every row has `columns` in that order (else none), and
 * whether each is a plain parameter. A loop over `Object.values`: `flatMap` over a `map` of keyed
 * reads took about 37k instructions for one row of `transactions` (V8 flattens through a runtime
 * call an element): 75k of a transaction's 2.6M on SQLite (decision 201).
 */
function valuesOf(
  rows: readonly object[],
  columns: readonly string[],
): { values: unknown[]; allPlain: boolean } {
  const values: unknown[] = [];
  let allPlain = true;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    if (r > 0 && !sameColumns(row, columns)) return { values: [], allPlain: false };
    // Object.values follows the same order as Object.keys, which sameColumns (or `columns` itself) fixed.
    for (const value of Object.values(row)) {
      if (value === undefined || !plain(value)) allPlain = false;
      values.push(value);
    }
  }
  return { values, allPlain };
}

/** A shape kept for a table and row count: its columns in order, and its SQL (null: not reusable). */
interface Shape {
  columns: readonly string[];
  sql: string | null;
}

/**
 * The shapes kept for `table` with `count` rows, per dialect. Found by comparing column names
 * (interned strings, compared by identity first), not by a key joined and hashed per insert.
 */
function shapesOf(adapter: DialectAdapter, table: string, count: number): Shape[] {
  let tables = compiled.get(adapter);
  if (!tables) {
    tables = new Map();
    compiled.set(adapter, tables);
  }
  let counts = tables.get(table);
  if (!counts) {
    counts = new Map();
    tables.set(table, counts);
  }
  let shapes = counts.get(count);
  if (!shapes) {
    shapes = [];
    counts.set(count, shapes);
  }
  return shapes;
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
