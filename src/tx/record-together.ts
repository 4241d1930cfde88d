/** Plain sends that arrive in one turn recorded as one group-commit job: nonces taken once per address, each table written once. */
import { CompiledQuery, type Transaction } from "kysely";
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

const SAVEPOINT = CompiledQuery.raw("savepoint together");
const RELEASE = CompiledQuery.raw("release savepoint together");
const ROLLBACK_TO = CompiledQuery.raw("rollback to savepoint together");

/**
 * Records `items` in `trx`, or, when anything in it fails, nothing: its writes are taken back
 * inside the transaction and every item is left without a row, for the caller to record it on its
 * own. The job itself succeeds either way, so a failed commit is never mistaken for a batch taken
 * back (the rows may then be durable, and recording them again would sign a second payload).
 */
export async function recordTogether(
  trx: Transaction<Database>,
  items: readonly RecordItem[],
  deps: RecordTogetherDeps,
): Promise<void> {
  await trx.executeQuery(SAVEPOINT);
  try {
    await writeTogether(trx, items, deps);
    await trx.executeQuery(RELEASE);
  } catch (error) {
    // A failure of the connection itself fails these too, and with them the job.
    await trx.executeQuery(ROLLBACK_TO);
    await trx.executeQuery(RELEASE);
    for (const item of items) {
      item.row = undefined;
      item.apart = error;
    }
  }
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
    const first = await deps.ledger.allocateMany(trx, chain.chainId, account.address, list.length);
    const handed = await HANDED_OUT_BETWEEN.execute(trx, [
      chain.chainId,
      account.address.toLowerCase(),
      first,
      first + list.length,
    ]);
    if (handed.rows.length > 0)
      throw new NotTogether(`bytes were handed out at nonce ${handed.rows[0]!.nonce}`);
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
  await deps.states.createMany(trx, rows);
  await deps.guard.allowedMany(
    trx,
    items.map((item) => ({ admission: item.admission, txId: item.row!.id, txHash: item.row!.tx_hash })),
  );
}
