/** A migration written as SQL text: the DDL both stores read alike, run statement by statement. */
import { type Kysely, type Migration, sql } from "kysely";

/** A migration's text: statements end with `;`; `--` lines say why. */
export interface SqlSteps {
  up: string;
  down: string;
}

/**
 * The statements of `text`, comments dropped. Split on every `;`: this DDL quotes no string that
 * could hold one, and SQLite's driver runs one statement a call.
 */
export function statementsOf(text: string): string[] {
  return text
    .replace(/^\s*--.*$/gm, "")
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "");
}

export async function runStatements(db: Kysely<unknown>, text: string): Promise<void> {
  for (const statement of statementsOf(text)) await sql.raw(statement).execute(db);
}

export function sqlMigration(steps: SqlSteps): Migration {
  return {
    up: (db) => runStatements(db, steps.up),
    down: (db) => runStatements(db, steps.down),
  };
}
