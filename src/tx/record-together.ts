/** Plain sends that arrive in one turn recorded as one group-commit job: nonces taken once per address, each table written once. */
import type { Transaction } from "kysely";
import type { Admission, PolicyGuard } from "../policies/policy-guard.js";
import { PreparedQuery } from "../store/prepared-query.js";
import type { Database, TransactionsTable } from "../store/schema.js";
import type { Fees } from "./fee-oracle.js";
import type { NonceLedger } from "./nonce-ledger.js";
import { queuedRow, type SignedOperation, signOperation } from "./signed-operation.js";
import type { TransactionStates } from "./transaction-states.js";

/** One request's part of a joined record: what it asks for, and the row it gets. */
export interface RecordItem {
  op: SignedOperation;
  gas: bigint;
  fees: Fees;
  admission: Admission;
  row?: TransactionsTable | undefined;
  /** Why the batch was taken back (the item is then recorded on its own). */
  apart?: unknown;
}

export interface RecordTogetherDeps {
  ledger: NonceLedger;
  states: TransactionStates;
  guard: PolicyGuard;
  now: () => number;
  /** The store is PostgreSQL (where a statement saved is a round trip saved). */
  postgres: boolean;
}

/**
 * Whether a request may be recorded with others: nothing in it needs a step of its own inside the
 * signing transaction (a caller's own nonce, EIP-7702 authorizations that take other nonces, a
 * rolling limit counted under the lock). Everything else goes the one-job-per-request way.
 */
export function recordsTogether(op: SignedOperation, admission: Admission): boolean {
  return op.nonce === undefined && op.authorizations === undefined && admission.limits.length === 0;
}

/** Something a request of the batch needs that only the one-job path does (bytes handed out at its nonce). */
export class NotTogether extends Error {
  constructor(reason: string) {
    super(`recorded one by one: ${reason}`);
    this.name = "NotTogether";
  }
}

/**
 * A joined record taken back whole: thrown out of its job, so the group commit takes back only
 * this job's writes (its savepoint, or the whole transaction when it ran alone) and commits the
 * rest. It is never a failed commit: its items were recorded nowhere, and each is recorded alone.
 */
export class TakenBack extends Error {
  constructor(readonly reason: unknown) {
    super("joined record taken back");
    this.name = "TakenBack";
  }
}

/** Whether eth_signTransaction handed out bytes in [from, to) of the address (they need the one-job path). */
const HANDED_OUT_BETWEEN = new PreparedQuery((db, slot) =>
  db
    .selectFrom("signed_payloads")
    .select("nonce")
    .where("chain_id", "=", slot<number>(0))
    .where("address", "=", slot<string>(1))
    .where("nonce", ">=", slot<number>(2))
    .where("nonce", "<", slot<number>(3))
    .limit(1),
);

/**
 * PostgreSQL: the next `count` nonces taken and the handed-out check of their range in one
 * statement (a round trip fewer under the row's lock). SQLite has no UPDATE in a WITH clause,
 * and no round trip to save: it runs the two statements.
 */
const TAKE_UNLESS_HANDED_OUT = new PreparedQuery((db, slot) =>
  db
    .with("taken", (db) =>
      db
        .updateTable("nonce_ledger")
        .set((eb) => ({ next_nonce: eb("next_nonce", "+", slot<number>(0)) }))
        .where("chain_id", "=", slot<number>(1))
        .where("address", "=", slot<string>(2))
        .returning("next_nonce"),
    )
    .selectFrom("taken")
    .select((eb) => [
      "taken.next_nonce",
      eb
        .selectFrom("signed_payloads")
        .select("signed_payloads.nonce")
        .where("signed_payloads.chain_id", "=", slot<number>(3))
        .where("signed_payloads.address", "=", slot<string>(4))
        .where("signed_payloads.nonce", ">=", eb(eb.ref("taken.next_nonce"), "-", slot<number>(5)))
        .where("signed_payloads.nonce", "<", eb.ref("taken.next_nonce"))
        .limit(1)
        .as("handed"),
    ]),
);

/**
 * Records `items` in `trx`, or, when anything in it fails, nothing: every item is left without a
 * row, for the caller to record it on its own, and TakenBack is thrown so that the group commit
 * takes this job's writes back. A failed commit is another error, so it is never mistaken for a
 * batch taken back (the rows may then be durable, and recording them again would sign a second
 * payload).
 */
export async function recordTogether(
  trx: Transaction<Database>,
  items: readonly RecordItem[],
  deps: RecordTogetherDeps,
): Promise<void> {
  try {
    await writeTogether(trx, items, deps);
  } catch (error) {
    for (const item of items) {
      item.row = undefined;
      item.apart = error;
    }
    throw new TakenBack(error);
  }
}

/** Takes `count` nonces of the address and answers the first; throws NotTogether where bytes were handed out among them. */
async function takeNonces(
  trx: Transaction<Database>,
  chainId: number,
  address: string,
  count: number,
  deps: RecordTogetherDeps,
): Promise<number> {
  const key = address.toLowerCase();
  let first: number;
  let handed: number | null | undefined;
  if (deps.postgres) {
    const [row] = (await TAKE_UNLESS_HANDED_OUT.execute(trx, [count, chainId, key, chainId, key, count]))
      .rows;
    if (!row) throw new Error(`nonce ledger has no row for ${address} on chain ${chainId}; sync first`);
    first = Number(row.next_nonce) - count;
    handed = row.handed;
  } else {
    first = await deps.ledger.allocateMany(trx, chainId, address, count);
    handed = (await HANDED_OUT_BETWEEN.execute(trx, [chainId, key, first, first + count])).rows[0]?.nonce;
  }
  if (handed !== null && handed !== undefined)
    throw new NotTogether(`bytes were handed out at nonce ${handed}`);
  return first;
}

/**
 * Writes `items` in `trx`: per address (in key order, as every group takes its rows) one
 * statement takes its requests' nonces in arrival order; then each is signed, and the rows, their
 * events and their audit entries are written once per table. Anything that fails throws, and the
 * job's savepoint takes every write back (the caller then records the requests one by one).
 */
async function writeTogether(
  trx: Transaction<Database>,
  items: readonly RecordItem[],
  deps: RecordTogetherDeps,
): Promise<void> {
  const byAddress = new Map<string, RecordItem[]>();
  for (const item of items) {
    item.row = undefined;
    item.apart = undefined;
    const key = `${item.op.chain.chainId}:${item.op.account.address.toLowerCase()}`;
    const list = byAddress.get(key);
    if (list) list.push(item);
    else byAddress.set(key, [item]);
  }
  const nonces = new Map<RecordItem, number>();
  for (const key of [...byAddress.keys()].sort()) {
    const list = byAddress.get(key)!;
    const { chain, account } = list[0]!.op;
    const first = await takeNonces(trx, chain.chainId, account.address, list.length, deps);
    for (const [i, item] of list.entries()) nonces.set(item, first + i);
  }
  const now = deps.now();
  // Asked together, so the signing thread gets them as one message (keys/sign-thread.ts); every one
  // is settled before anything is thrown, so none lands on an item after the batch is taken back.
  const signed = await Promise.allSettled(
    items.map((item) => signOperation(item.op, item.gas, item.fees, nonces.get(item)!, [])),
  );
  for (const [i, item] of items.entries()) {
    const outcome = signed[i]!;
    if (outcome.status === "rejected") throw outcome.reason;
    item.row = queuedRow(item.op, {
      gas: item.gas,
      fees: item.fees,
      nonce: nonces.get(item)!,
      raw: outcome.value,
      authorizations: [],
      replaces: null,
      now,
    });
  }
  const rows = items.map((item) => item.row!);
  const audits = deps.guard.allowedRows(
    items.map((item) => ({ admission: item.admission, txHash: item.row!.tx_hash })),
  );
  await deps.states.createMany(trx, rows, [audits]);
}
