/** Plain sends that arrive in one turn recorded as one group-commit job: nonces taken once per address, each table written once. */
import { CompiledQuery, type Transaction } from "kysely";
import type { Admission, PolicyGuard, SigningRequest } from "../policies/policy-guard.js";
import { anyPolicyApplies } from "../policies/policy-store.js";
import { onPostgres } from "../store/dialect.js";
import { fixedLimit } from "../store/fixed-limit.js";
import type { LastStatement } from "../store/group-commit.js";
import { nameStatement } from "../store/named-statements.js";
import { PreparedQuery } from "../store/prepared-query.js";
import type { Database, TransactionsTable } from "../store/schema.js";
import { webhooksWereRead } from "../webhooks/outbox.js";
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
 * signing transaction (a caller's own nonce, EIP-7702 authorizations that take other nonces; its
 * admission must count no rolling limit under the lock either). Everything else goes the
 * one-job-per-request way.
 */
export function recordsTogether(op: SignedOperation): boolean {
  return op.nonce === undefined && op.authorizations === undefined;
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

/** SQLite: whether eth_signTransaction handed out bytes in [from, to) of the address (they need the one-job path). */
const HANDED_OUT_BETWEEN = new PreparedQuery((db, slot) =>
  db
    .selectFrom("signed_payloads")
    .select("nonce")
    .where("chain_id", "=", slot<number>(0))
    .where("address", "=", slot<string>(1))
    .where("nonce", ">=", slot<number>(2))
    .where("nonce", "<", slot<number>(3))
    .limit(fixedLimit(1)),
);

/**
 * PostgreSQL: every address's nonces of the group taken, and each range checked for handed-out
 * bytes, by one statement (one round trip for a group of any number of addresses, not two an
 * address). The rows are locked in the order of their `chain:address` keys, as every group takes
 * its rows, before any is raised. The owner's webhooks are read by it too, when the group's
 * requests have one owner: the inserts that follow are then the group's last statement, and its
 * commit is sent behind them unanswered (decision 178). So are the policies of the wallets and
 * keys of requests admitted without reading them: any found bound to one sends the group the
 * one-by-one way, each request admitted again (decision 179). Its lists come as JSON rather than
 * arrays: PostgreSQL sizes an array parameter from its value, so each run was planned anew for its
 * array (0.5 ms of the backend's time a group); from JSON it sizes every run alike, and keeps one
 * generic plan. SQLite has no round trip to save: it runs two prepared statements an address (one
 * statement for all measured no faster there, and slower at one address), and reads the policies
 * once a wallet and key pair whose policies were not read (decision 211).
 */
const TAKE_ALL = `
with wanted as (
  select * from json_to_recordset($1::json) as w(chain_id bigint, address text, count bigint)
),
locked as (
  select l.chain_id, l.address, w.count
  from nonce_ledger l join wanted w on w.chain_id = l.chain_id and w.address = l.address
  order by (l.chain_id::text || ':' || l.address) collate "C"
  for update of l
),
taken as (
  update nonce_ledger n set next_nonce = n.next_nonce + k.count
  from locked k
  where n.chain_id = k.chain_id and n.address = k.address
  returning n.chain_id, n.address, n.next_nonce, k.count
),
hooks as (
  select coalesce(json_agg(json_build_object('id', h.id, 'events', h.events)), '[]'::json) as list
  from webhooks h
  where $3::boolean and h.owner is not distinct from $2::text
),
policed as (
  select exists (
    select 1 from policies p
    join json_to_recordset($4::json) as r(wallet_id text, api_key_id text)
      on (p.wallet_id = r.wallet_id or p.api_key_id = r.api_key_id)
      and (p.wallet_id is null or p.wallet_id = r.wallet_id)
      and (p.api_key_id is null or p.api_key_id = r.api_key_id)
  ) as found
)
select t.chain_id, t.address, t.next_nonce, t.count,
  (select s.nonce from signed_payloads s
    where s.chain_id = t.chain_id and s.address = t.address
      and s.nonce >= t.next_nonce - t.count and s.nonce < t.next_nonce
    limit 1) as handed,
  (select list from hooks) as hooks,
  (select found from policed) as policed
from taken t`;
nameStatement(TAKE_ALL);

/**
 * SQLite: whether a policy applies to a request admitted without reading its policies (decision
 * 211): PolicyStore's own query and rule, read in the group's transaction, once a wallet and key pair.
 */
async function policedOnSqlite(
  trx: Transaction<Database>,
  unread: readonly SigningRequest[],
): Promise<boolean> {
  const pairs = new Map<string, SigningRequest>();
  for (const request of unread) pairs.set(`${request.walletId}\u0000${request.apiKeyId}`, request);
  for (const { walletId, apiKeyId } of pairs.values())
    if (await anyPolicyApplies(trx, walletId, apiKeyId)) return true;
  return false;
}

interface Taken {
  chain_id: string | number;
  address: string;
  next_nonce: string | number;
  count: string | number;
  handed: string | number | null;
  /** The owner's webhooks (json), or none when not asked. */
  hooks: { id: string; events: string }[];
  /** Whether a policy applies to a request whose policies were not read (PolicyStore.applying's rule). */
  policed: boolean;
}

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
): Promise<LastStatement | undefined> {
  const takeBack = (error: unknown) => {
    for (const item of items) {
      item.row = undefined;
      item.apart = error;
    }
    return new TakenBack(error);
  };
  try {
    const last = await writeTogether(trx, items, deps);
    // Inserts still on the wire: when they fail the transaction is not committed (their answer
    // decides the job's, see LastStatement), so the batch is taken back as if they had thrown here.
    return last?.failingWith(takeBack);
  } catch (error) {
    throw takeBack(error);
  }
}

/** Where the batch needs the one-job path: bytes handed out at one of its nonces. */
function refuseHandedOut(handed: string | number | null | undefined): void {
  if (handed !== null && handed !== undefined)
    throw new NotTogether(`bytes were handed out at nonce ${handed}`);
}

/**
 * Takes each address's nonces (`count` of them, by `chain:address` key, in key order) and answers
 * the first of each; throws NotTogether where bytes were handed out among them.
 */
async function takeNonces(
  trx: Transaction<Database>,
  wanted: readonly { key: string; chainId: number; address: string; count: number }[],
  /** The owner of every request of the group, whose webhooks are read with the nonces; undefined when several. */
  owner: { is: string | null } | undefined,
  /** The requests admitted without reading their policies (Admission.unread). */
  unread: readonly SigningRequest[],
  deps: RecordTogetherDeps,
): Promise<Map<string, number>> {
  const firsts = new Map<string, number>();
  if (onPostgres(trx)) {
    const { rows } = await trx.executeQuery<Taken>(
      CompiledQuery.raw(TAKE_ALL, [
        JSON.stringify(wanted.map((w) => ({ chain_id: w.chainId, address: w.address, count: w.count }))),
        owner?.is ?? null,
        owner !== undefined,
        JSON.stringify(unread.map((r) => ({ wallet_id: r.walletId, api_key_id: r.apiKeyId }))),
      ]),
    );
    if (rows[0]?.policed) throw new NotTogether("a policy is bound to a wallet or key of the batch");
    if (owner !== undefined && rows[0] !== undefined) webhooksWereRead(trx, owner.is, rows[0].hooks);
    for (const row of rows) {
      refuseHandedOut(row.handed);
      firsts.set(`${row.chain_id}:${row.address}`, Number(row.next_nonce) - Number(row.count));
    }
  } else {
    for (const { key, chainId, address, count } of wanted) {
      const first = await deps.ledger.allocateMany(trx, chainId, address, count);
      const handed = await HANDED_OUT_BETWEEN.execute(trx, [chainId, address, first, first + count]);
      refuseHandedOut(handed.rows[0]?.nonce);
      firsts.set(key, first);
    }
    // After the first write, not before: a transaction SQLite began with a read cannot write once
    // another connection (the CLI's) has committed since (SQLITE_BUSY_SNAPSHOT, not waited out).
    if (await policedOnSqlite(trx, unread))
      throw new NotTogether("a policy is bound to a wallet or key of the batch");
  }
  for (const { key, chainId, address } of wanted)
    if (!firsts.has(key))
      throw new Error(`nonce ledger has no row for ${address} on chain ${chainId}; sync first`);
  return firsts;
}

/**
 * Writes `items` in `trx`: each address's requests take their nonces in arrival order (the
 * addresses in key order, as every group takes its rows; on PostgreSQL one statement for all);
 * then each is signed, and the rows, their events and their audit entries are written once per
 * table. Anything that fails throws, and the group takes the job's writes back (the caller then
 * records the requests one by one).
 */
async function writeTogether(
  trx: Transaction<Database>,
  items: readonly RecordItem[],
  deps: RecordTogetherDeps,
): Promise<LastStatement | undefined> {
  const byAddress = new Map<string, RecordItem[]>();
  for (const item of items) {
    item.row = undefined;
    item.apart = undefined;
    const key = `${item.op.chain.chainId}:${item.op.account.address.toLowerCase()}`;
    const list = byAddress.get(key);
    if (list) list.push(item);
    else byAddress.set(key, [item]);
  }
  const keys = [...byAddress.keys()].sort();
  const owner = items[0]!.op.owner ?? null;
  const firsts = await takeNonces(
    trx,
    keys.map((key) => {
      const list = byAddress.get(key)!;
      const { chain, account } = list[0]!.op;
      return { key, chainId: chain.chainId, address: account.address.toLowerCase(), count: list.length };
    }),
    items.every((item) => (item.op.owner ?? null) === owner) ? { is: owner } : undefined,
    items.filter((item) => item.admission.unread).map((item) => item.admission.request),
    deps,
  );
  const nonces = new Map<RecordItem, number>();
  for (const key of keys)
    for (const [i, item] of byAddress.get(key)!.entries()) nonces.set(item, firsts.get(key)! + i);
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
  return deps.states.createManyAndEnd(trx, rows, [audits]);
}
