/** Transaction states written into a statement's SQL as literals, never bound, wherever a statement compares `transactions.state`. */
import { type RawBuilder, sql } from "kysely";
import type { TxState } from "./schema.js";

/**
 * The partial index on dropped rows (`where state = 'dropped'`, migration 028) made SQLite plan
 * every statement with `state = ?` by the value bound: to know whether the index may answer, the
 * planner compares the bound value with 'dropped' and marks the statement to be compiled again
 * whenever that parameter is bound anew, which is every run (better-sqlite3 binds all parameters
 * each time). A sent transaction's move was compiled again each time it ran (about 90,000
 * instructions, 3% of a transaction's; decision 196). A literal state is planned once. The states
 * are the closed set TxState, and Kysely quotes a literal in any case.
 */
export const stateLiteral = (state: TxState): RawBuilder<TxState> => sql.lit(state);

/** The states of an `in` list, each a literal (see stateLiteral). */
export const stateLiterals = (states: readonly TxState[]): RawBuilder<TxState>[] => states.map(stateLiteral);
