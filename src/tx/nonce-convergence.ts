/** After any answer that leaves a reserved nonce unused: the address's ledger set from the chain and its live records, every gap between filled. */
import type { Transaction } from "kysely";
import type { Logger } from "pino";
import { getAddress, type Hex } from "viem";
import type { Store } from "../store/database.js";
import type { Database, TransactionsTable } from "../store/schema.js";
import { stateLiterals } from "../store/state-literal.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nonceOf, sendRawTransaction } from "../upstream/node-reads.js";
import { authorizationsOf } from "./authorizations.js";
import type { FeeOracle } from "./fee-oracle.js";
import type { NonceLedger } from "./nonce-ledger.js";
import { queuedRow, type SignedOperation, signOperation } from "./signed-operation.js";
import type { TransactionStates } from "./transaction-states.js";

export interface ConvergenceDeps {
  store: Store;
  ledger: NonceLedger;
  fees: FeeOracle;
  states: TransactionStates;
  logger: Pick<Logger, "warn">;
  now: () => number;
}

/** States whose nonce the chain has, or may still get: never handed out again, never left behind. */
const LIVE = ["queued", "sent", "mined", "confirmed"] as const;

/** Gaps filled in one pass at most: a ledger this far ahead of its records is not filled blindly. */
const MAX_FILLERS = 64;

/**
 * The nonces the live records of an address hold at or above `from`: each row's own, and the
 * nonce + 1 its own EIP-7702 authorization takes when it runs.
 */
export function heldNonces(
  rows: readonly Pick<TransactionsTable, "nonce" | "metadata" | "from_address">[],
  from: number,
): Set<number> {
  const held = new Set<number>();
  for (const row of rows) {
    if (row.nonce >= from) held.add(row.nonce);
    const metadata = row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : undefined;
    for (const { authority, authorization } of authorizationsOf(metadata))
      if (authority.toLowerCase() === row.from_address.toLowerCase() && authorization.nonce >= from)
        held.add(authorization.nonce);
  }
  return held;
}

/**
 * The plan for an address: its next nonce is the chain's pending nonce or past every nonce a live
 * record holds, whichever is higher (this may lower the ledger: nonces reserved for transactions
 * the chain refused); every nonce in between that no live record holds is a gap, filled with a
 * zero transfer to self so the ones after it are not stuck.
 */
export function convergencePlan(
  pending: number,
  held: ReadonlySet<number>,
): { next: number; gaps: number[] } {
  let next = pending;
  for (const nonce of held) if (nonce + 1 > next) next = nonce + 1;
  const gaps: number[] = [];
  for (let nonce = pending; nonce < next && gaps.length <= MAX_FILLERS; nonce++)
    if (!held.has(nonce)) gaps.push(nonce);
  return { next, gaps };
}

/**
 * Brings the address's ledger to the chain: read the chain's pending nonce, then under the ledger
 * row's lock read the live records, set the next nonce and sign a filler for each gap (with
 * `template`'s signer, wallet and owner). Fillers are stored queued before they are sent, like any
 * transaction; one the node does not take now is resent by the tracker. Without a signer the
 * ledger still moves, and the gaps are reported (the next signature for the address fills them).
 */
export async function converge(
  deps: ConvergenceDeps,
  chain: Chain,
  address: string,
  template: SignedOperation | undefined,
): Promise<{ next: number; filled: number[] }> {
  const pending = await nonceOf(chain, address);
  const fees = template === undefined ? undefined : await deps.fees.get(chain);
  const { next, fillers, unfilled } = await deps.store.db.transaction().execute(async (trx) => {
    await deps.ledger.lock(trx, chain.chainId, address);
    const rows = await liveRows(trx, chain.chainId, address);
    const plan = convergencePlan(pending, heldNonces(rows, pending));
    const made: TransactionsTable[] = [];
    if (template !== undefined && fees !== undefined)
      for (const nonce of plan.gaps) made.push(await fill(deps, trx, template, nonce, fees));
    await deps.ledger.setNext(trx, chain.chainId, address, plan.next);
    return { next: plan.next, fillers: made, unfilled: template === undefined ? plan.gaps : [] };
  });
  if (unfilled.length > 0)
    deps.logger.warn(
      { chainId: chain.chainId, address, nonces: unfilled },
      "nonce gaps left unfilled: no signer for the address now; its next signature fills them",
    );
  for (const filler of fillers) {
    try {
      await sendRawTransaction(chain, filler.raw as Hex);
      await deps.states.move(filler, { set: { state: "sent", broadcasts: 1 }, stamp: ["sent_at"] });
    } catch (error) {
      deps.logger.warn(
        { err: error, nonce: filler.nonce },
        "gap filler not accepted yet; the tracker will resend it",
      );
    }
  }
  return { next, filled: fillers.map((f) => f.nonce) };
}

function liveRows(trx: Transaction<Database>, chainId: number, address: string) {
  return trx
    .selectFrom("transactions")
    .select(["nonce", "metadata", "from_address"])
    .where("chain_id", "=", chainId)
    .where("from_address", "=", getAddress(address))
    .where("state", "in", stateLiterals(LIVE))
    .execute();
}

/** A zero transfer to self at `nonce`: nothing of the operation that left the gap (its calldata, access list, authorizations). */
async function fill(
  deps: ConvergenceDeps,
  trx: Transaction<Database>,
  template: SignedOperation,
  nonce: number,
  fees: Awaited<ReturnType<FeeOracle["get"]>>,
): Promise<TransactionsTable> {
  const {
    accessList: _list,
    authorizations: _authorizations,
    nonce: _nonce,
    transportId: _transport,
    gas: _gas,
    fees: _fees,
    ...plain
  } = template;
  const op: SignedOperation = {
    ...plain,
    to: template.account.address,
    data: "0x",
    value: 0n,
    kind: "filler",
    metadata: { fills_nonce: nonce },
  };
  const raw = await signOperation(op, 21_000n, fees, nonce, []);
  const row = queuedRow(op, {
    gas: 21_000n,
    fees,
    nonce,
    raw,
    authorizations: [],
    replaces: null,
    now: deps.now(),
  });
  await deps.states.create(trx, row);
  return row;
}
