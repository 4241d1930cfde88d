/** PostgreSQL: the hot statements named, so that each connection parses and plans them once and then only binds and runs them. */
import type pg from "pg";

/**
 * An unnamed statement is parsed and planned again on every run: for the signing path's four
 * statements that was more of the backend's time than running them. A named one is parsed once per
 * connection; after five runs PostgreSQL may keep a generic plan and skip planning too.
 *
 * Only statements marked here are named (the compiled SQL of PreparedQuery, the kept insert
 * shapes, a few raw statements), never every statement: a name lives as long as its connection
 * and pg never frees it. The count is capped, so a shape that varies without bound (a list's length
 * compiled into the SQL) cannot grow the server's memory; past the cap a statement runs unnamed.
 */
const names = new Map<string, string>();
const MAX_NAMED = 500;

/**
 * A statement whose result columns come from `*` is never named: a column added by a newer
 * instance's migration would change its result, and PostgreSQL refuses a named statement whose
 * result changed ("cached plan must not change result type") on every later run.
 */
const RESULT_FROM_STAR = /^\s*select\s+\*|\breturning\s+\*/i;

/** Marks `sql` as run often: on PostgreSQL each connection parses it once. */
export function nameStatement(sql: string): void {
  if (names.has(sql)) return;
  if (RESULT_FROM_STAR.test(sql))
    throw new Error(`a named statement must list its result columns, not "*": ${sql}`);
  if (names.size < MAX_NAMED) names.set(sql, `cg_${names.size}`);
}

/** The name `sql` runs under, if it is marked. */
export function statementName(sql: string): string | undefined {
  return names.get(sql);
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Makes `client` run marked statements by name. Kysely calls `query(sql, parameters)`; that call,
 * for a marked SQL text, becomes pg's named form (pg sends Parse only the first time on this
 * connection). Any other call goes through untouched.
 */
export function runMarkedByName(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  const named: Query = (config, values, callback) => {
    if (typeof config === "string" && Array.isArray(values) && callback === undefined) {
      const name = names.get(config);
      if (name !== undefined) return query({ name, text: config, values });
    }
    return query(config, values, callback);
  };
  client.query = named as typeof client.query;
}
