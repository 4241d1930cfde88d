/** The transaction lifecycle: every state, every move allowed and why it happens, and the one writer that makes moves. */
import { sql, type Transaction, type Updateable } from "kysely";
import type { Store } from "../store/database.js";
import { onPostgres } from "../store/dialect.js";
import { LastStatement } from "../store/group-commit.js";
import { type InsertPart, insertRow, insertRowsStatement, insertRowsTogether } from "../store/insert-row.js";
import { PreparedQuery } from "../store/prepared-query.js";
import type { Database, TransactionsTable, TxState } from "../store/schema.js";
import { stateLiteral } from "../store/state-literal.js";
import {
  hasWebhooks,
  recordEvent,
  webhooksKnown,
  webhooksRead,
  webhooksWereRead,
} from "../webhooks/outbox.js";
import { transactionEvent } from "./transaction-event.js";

/**
 * What can happen to a transaction, by state (each starts `queued`: signed and stored, see create): the states it may move to and what moves it. Every
 * move is announced (`transaction.<state>` webhook event) in the same database transaction; a move
 * to the state a row is already in only updates its fields (a resend, a new block after a reorg).
 */
export const MOVES: Readonly<Record<TxState, Readonly<Partial<Record<TxState, string>>>>> = {
  queued: {
    sent: "a node took the signed bytes (the pipeline's broadcast, or the tracker's resend)",
    failed: "a node refused it; its nonce was given back or filled (pipeline), or a resend was refused",
    dropped: "a resend found its nonce used by another transaction",
  },
  sent: {
    sent: "sent again: the node lost it, or a reorg took its block",
    mined: "its receipt is in a block and succeeded (with 1 confirmation it goes on to confirmed at once)",
    failed: "its receipt says it reverted, or a resend was refused",
    dropped: "another transaction took its nonce, or the transaction it replaced was mined instead",
    replaced: "the tracker sent a fee bump of it (same nonce)",
  },
  mined: {
    mined: "a reorg moved it to another block",
    confirmed: "its block is still the chain's after the configured confirmations",
    sent: "its block is no longer the chain's: it waits to be mined again",
    queued: "a reorg dropped it from every block: the tracker resends it",
    failed: "after a reorg its receipt says it reverted",
  },
  confirmed: {
    mined: "a deep reorg moved it to another block",
    queued: "a deep reorg dropped it: the tracker resends it",
    failed: "after a deep reorg its receipt says it reverted",
  },
  failed: {
    mined: "a reorg put it in a block where it succeeded",
    failed: "a reorg moved its reverted receipt to another block",
    queued: "a reorg dropped the block it reverted in: the tracker resends it",
  },
  replaced: {
    mined: "it was mined after all, not its fee bump (the bump is dropped)",
  },
  dropped: {
    mined:
      "its own receipt is on the chain after all (a node had answered as if another transaction took its nonce)",
    failed: "its own receipt is on the chain after all, and says it reverted",
  },
};

export function canMove(from: TxState, to: TxState): boolean {
  return MOVES[from][to] !== undefined;
}

/** A row queued since this instance started is its pipeline's for this long: it may be broadcasting it right now. */
export const QUEUED_GRACE_MS = 10_000;

/**
 * Whether a queued row is still its pipeline's to send (so the tracker leaves it): rows queued
 * before the tracker started (a crash) are the tracker's at once; later ones after the grace time.
 */
export function heldByPipeline(row: TransactionsTable, trackerStartedAt: number, now: number): boolean {
  return (
    row.state === "queued" && row.created_at >= trackerStartedAt && now - row.created_at < QUEUED_GRACE_MS
  );
}

/** Columns a move sets to the time its write commits (so rows of one burst share one statement). */
export type StampedColumn = "sent_at";

export interface Move {
  set: Partial<TransactionsTable>;
  /** A state reached at once after `set.state` (both announced, in order): mined then confirmed. */
  then?: TxState;
  stamp?: readonly StampedColumn[];
}

function assertMove(row: TransactionsTable, move: Move): void {
  const to = move.set.state;
  if (to !== undefined && !canMove(row.state, to))
    throw new Error(`transaction ${row.id}: no move from ${row.state} to ${to}`);
  if (move.then !== undefined && !canMove(to ?? row.state, move.then))
    throw new Error(`transaction ${row.id}: no move from ${to ?? row.state} to ${move.then}`);
}

export class TransactionStates {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Moves `row` (only if it is still in the state it was read in). The same move of many rows in
   * one turn shares one job and one `UPDATE … WHERE id IN (…)` (a burst's broadcasts, a pass's
   * receipts); each caller hears once the commit holding its row is durable.
   */
  move(row: TransactionsTable, move: Move, lazy = false): Promise<void> {
    assertMove(row, move);
    const how = moveKey([row.state, move.set, move.then ?? null, move.stamp ?? []]);
    return this.store.group.join(
      `move:${how}`,
      row,
      (trx, rows) => this.write(trx, rows, row.state, move),
      transactionKey(row.id),
      { lazy },
    );
  }

  /** A transaction's first state: signed and stored as `queued`, announced, before any broadcast. */
  async create(trx: Transaction<Database>, row: TransactionsTable): Promise<void> {
    if (row.state !== "queued") throw new Error(`transaction ${row.id} must start queued, not ${row.state}`);
    await insertRow(trx, "transactions", row);
    await recordEvent(trx, transactionEvent(row), row.created_at);
  }

  /**
   * Several first states in one insert (a joined record's rows), each announced as `create` does;
   * `alongside` are rows of other tables written with them (on PostgreSQL by the same statement).
   * The group-commit job that calls it must end there and return what it returns: the inserts may
   * still be on the wire (a LastStatement, when no event is to be recorded and the webhooks are
   * known already).
   */
  async createManyAndEnd(
    trx: Transaction<Database>,
    rows: readonly TransactionsTable[],
    alongside: readonly InsertPart[] = [],
  ): Promise<LastStatement | undefined> {
    for (const row of rows)
      if (row.state !== "queued")
        throw new Error(`transaction ${row.id} must start queued, not ${row.state}`);
    const owner = rows[0]?.owner ?? null;
    const oneOwner = rows.every((row) => row.owner === owner);
    const parts = [{ table: "transactions" as const, rows }, ...alongside];
    if (oneOwner && webhooksKnown(trx, owner) && !(await hasWebhooks(trx, owner))) {
      // No event to record: the inserts, in one statement, end the job (decision 178).
      const one = insertRowsStatement(trx, parts);
      if (one) return LastStatement.send(trx, one);
    }
    // The owner's webhooks are read in the inserts' statement (one round trip fewer on PostgreSQL),
    // for the events below.
    const hooks = oneOwner ? webhooksRead(trx, owner) : undefined;
    const read = await insertRowsTogether(trx, parts, hooks);
    if (hooks) webhooksWereRead(trx, owner, read);
    for (const row of rows) await recordEvent(trx, transactionEvent(row), row.created_at);
  }

  /** The same move inside a database transaction the caller holds (with the ledger's and the policy's writes). */
  async moveIn(trx: Transaction<Database>, row: TransactionsTable, move: Move): Promise<void> {
    assertMove(row, move);
    await this.write(trx, [row], row.state, move);
  }

  private async write(
    trx: Transaction<Database>,
    rows: readonly TransactionsTable[],
    from: TxState,
    { set, then, stamp = [] }: Move,
  ): Promise<void> {
    const now = this.now();
    const stamped = Object.fromEntries(stamp.map((column) => [column, now]));
    const values: Record<string, unknown> = {
      ...set,
      ...stamped,
      ...(then === undefined ? {} : { state: then }),
      updated_at: now,
    };
    const columns = Object.keys(values).filter((column) => values[column] !== undefined);
    const ids = rows.map((r) => r.id);
    const { rows: updated } = await moveStatement(columns, from).execute(trx, [
      ...columns.map((column) => values[column]),
      onPostgres(trx) ? ids : JSON.stringify(ids),
    ]);
    // Every row moved is in `from` (the statement's condition).
    const entered = set.state !== undefined && set.state !== from;
    if (!entered && then === undefined) return;
    const changed = new Set(updated.map((u) => u.id));
    for (const r of rows) {
      // Most owners have no webhook: no moved row and no event is built for no one (a burst's
      // moves are thousands a second).
      if (!changed.has(r.id) || !(await hasWebhooks(trx, r.owner))) continue;
      const moved = { ...r, ...set, ...stamped, updated_at: now };
      if (entered) await recordEvent(trx, transactionEvent(moved), now);
      if (then !== undefined) await recordEvent(trx, transactionEvent({ ...moved, state: then }), now);
    }
  }
}

/**
 * A move's UPDATE by the columns it sets, compiled once per dialect (and named on PostgreSQL):
 * Kysely built and compiled each one anew, its SQL different for every count of rows (`in ($1,
 * ...)`), 1.5% of the event loop's busy time in a PostgreSQL burst (decision 183). The rows' ids are
 * one parameter: an array on PostgreSQL (`= any`), JSON on SQLite (`json_each`); both search the
 * primary key. The columns a move sets are the code's (a few shapes), the state moved from one of
 * TxState's, written into the SQL (see stateLiteral); bounded all the same.
 */
const moveStatements = new Map<string, PreparedQuery<{ id: string }>>();
const MAX_MOVE_SHAPES = 64;

function moveStatement(columns: readonly string[], from: TxState): PreparedQuery<{ id: string }> {
  const key = `${from}:${columns.join(",")}`;
  const kept = moveStatements.get(key);
  if (kept) return kept;
  const statement = new PreparedQuery<{ id: string }>((db, slot) =>
    db
      .updateTable("transactions")
      .set(Object.fromEntries(columns.map((column, i) => [column, slot(i)])) as Updateable<TransactionsTable>)
      .where(
        onPostgres(db)
          ? sql<boolean>`${sql.ref("id")} = any(${slot(columns.length)}::text[])`
          : sql<boolean>`${sql.ref("id")} in (select value from json_each(${slot(columns.length)}))`,
      )
      .where("state", "=", stateLiteral(from))
      .returning("id"),
  );
  if (moveStatements.size < MAX_MOVE_SHAPES) moveStatements.set(key, statement);
  return statement;
}

/**
 * What makes two moves the same move (one statement for both): the state moved from and the move.
 * Plain JSON first: a replacer function, called for every value, made this a measurable share of
 * a move; only a move holding a bigint needs one.
 */
function moveKey(parts: readonly unknown[]): string {
  try {
    return JSON.stringify(parts);
  } catch {
    return JSON.stringify(parts, (_, v) => (typeof v === "bigint" ? `${v}n` : v));
  }
}

/** Group-commit lock key of a transaction's row (see GroupCommit). */
export const transactionKey = (id: string) => `transaction:${id}`;
