/** What the tracker's jobs share: its options, the lifecycle writer, the clock and the reads every job makes. */
import type { Logger } from "pino";
import type { LocalAccount } from "viem";
import type { Finality } from "../config/config.js";
import type { Store } from "../store/database.js";
import { fixedLimit } from "../store/fixed-limit.js";
import type { TransactionsTable, TxState } from "../store/schema.js";
import { stateLiterals } from "../store/state-literal.js";
import { inStoredTrace, tracingOn } from "../tracing/spans.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { type NodeReceipt, nonceOf, receiptOf } from "../upstream/node-reads.js";
import type { FeeOracle } from "./fee-oracle.js";
import { HeadMarks } from "./head-marks.js";
import type { NonceLedger } from "./nonce-ledger.js";
import type { SignerRegistry } from "./signer-registry.js";
import type { TransactionPipeline } from "./transaction-pipeline.js";
import { TransactionStates } from "./transaction-states.js";

export interface TrackerOptions {
  store: Store;
  chains: ChainRegistry;
  logger: Logger;
  /** Blocks (including the transaction's own) before a mined transaction counts as confirmed, at least. */
  confirmations: number;
  /**
   * Each chain's finality rule (the relayer's: upstream/chain-trust.ts): `confirmed` means final by
   * it. Absent: `confirmations` on every chain.
   */
  finality?: (chainId: number) => Finality;
  intervalMs: number;
  /** A sent transaction the node no longer knows is resent after this long. */
  resendAfterMs: number;
  /** A sent transaction still pending after this long is replaced with higher fees. */
  replaceAfterMs: number;
  /** Fee-bump replacements never offer more than this per gas. */
  maxFeePerGas: bigint;
  pipeline: TransactionPipeline;
  fees: FeeOracle;
  signers: SignerRegistry;
  /** Signers kept beyond the registry's memory (unattended wallets). */
  fallbackSigner?: (address: string) => Promise<LocalAccount | undefined>;
  now?: () => number;
  /** Each address's next nonce: set from the chain after a reconcile (see NonceLedger.realign). */
  ledger: NonceLedger;
}

/** Span names of the moves the tracker makes (the others: chaingate.transaction.<state>). */
const LIFE_SPANS: Partial<Record<TxState, string>> = {
  mined: "chaingate.receipt",
  confirmed: "chaingate.confirmation",
};

/** Rows handled per state and chain per pass, so a backlog cannot make one pass unbounded. */
export const BATCH = 500;

/** A page of a chain's rows in one state (see TrackerContext.page). */
export interface Page {
  rows: TransactionsTable[];
  /** Rows may follow this page: the walk goes on from its last row at the next pass. */
  more: boolean;
}

export class TrackerContext {
  readonly now: () => number;
  readonly states: TransactionStates;
  /** Transactions sent before this process started may have left a node's pool with it: check them at once. */
  readonly startedAt: number;
  /** Stuck transactions whose fee bump a policy refused: not tried again before this time. */
  readonly bumpRefusedUntil = new Map<string, number>();
  /** The head at which the node last had no receipt for a sent transaction's hash (see sentReceipt). */
  private readonly absent = new HeadMarks();
  /** The head at which each mined row's block (`number:hash`) was last read as the chain's (see track-confirm). */
  readonly canonical = new HeadMarks();
  /** The head at which each sent row was last checked for being held in the node's queue (see heldInQueue). */
  readonly heldChecked = new HeadMarks();
  /** Per chain and state, the last row of the page read last, where the walk goes on (see page). */
  private readonly walks = new Map<string, { nonce: number; id: string }>();
  /** Per chain, the hashes followed since its walk over sent rows began (see followedAll). */
  private readonly followed = new Map<number, string[]>();
  /** Per chain, the changes of state the tracker has asked for (see update): a pass that asked for some made progress. */
  private readonly moved = new Map<number, number>();

  constructor(readonly options: TrackerOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.states = new TransactionStates(options.store, this.now);
  }

  rows(chain: Chain, states: TransactionsTable["state"][]) {
    return this.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("chain_id", "=", chain.chainId)
      .where("state", "in", stateLiterals(states))
      .orderBy("nonce")
      .limit(fixedLimit(BATCH))
      .execute();
  }

  /** Moves a row on, if no one else did first (see TransactionStates.move: rows moved alike in one turn share one statement). */
  update(row: TransactionsTable, set: Partial<TransactionsTable>, then?: TxState): Promise<void> {
    // A row's state changed, not a resend's stamp or a note: what tells a pass it made progress.
    if (set.state !== undefined && set.state !== row.state)
      this.moved.set(row.chain_id, (this.moved.get(row.chain_id) ?? 0) + 1);
    const write = () => this.states.move(row, { set, ...(then === undefined ? {} : { then }) });
    if (!tracingOn() || set.state === undefined || set.state === row.state) return write();
    // Each step of the transaction's life is a span of the trace it was signed in, whichever instance
    // takes it; a second state reached in the same write (mined, then confirmed) is a span of its own.
    const step = (state: TxState, work: () => Promise<void>) =>
      inStoredTrace(row.trace_parent, LIFE_SPANS[state] ?? `chaingate.transaction.${state}`, work, {
        "chaingate.transaction.id": row.id,
        "chaingate.transaction.hash": row.tx_hash,
        "chaingate.transaction.state": state,
        ...(set.block_number == null ? {} : { "chaingate.transaction.block": set.block_number }),
        ...(set.error == null ? {} : { "chaingate.transaction.error": set.error }),
      });
    const moved = step(set.state, write);
    return then === undefined ? moved : moved.then(() => step(then, async () => {}));
  }

  /** The chain's rule for `confirmed`: a depth (at least --confirmations), or the node's finalized block. */
  finalityOf(chain: Chain): Finality {
    const rule = this.options.finality?.(chain.chainId) ?? this.options.confirmations;
    return rule === "finalized" ? rule : Math.max(rule, this.options.confirmations);
  }

  receipt(chain: Chain, hash: string): Promise<NodeReceipt | null> {
    // One pass asks for many receipts at once: they go to the node as one batch.
    return receiptOf(chain, hash, { batch: true });
  }

  /**
   * A sent (or recently dropped) transaction's receipt, asked of the node only when the chain's
   * head has moved since the node last had none for it (decision 187): a pass every second against a chain making a block
   * every 12 s asked twelve times a block for every transaction waiting in the pool. The head is
   * the head tracker's (read every --head-poll-ms and right after sends); with no fresh head, or a
   * different one (a reset that took it back included), the node is asked.
   */
  async sentReceipt(chain: Chain, hash: string): Promise<NodeReceipt | null> {
    const head = chain.head?.head;
    if (this.absent.at(chain, hash, head)) return null;
    const receipt = await this.receipt(chain, hash);
    if (receipt === null) this.absent.mark(chain, hash, head);
    else this.absent.clear(chain, hash);
    return receipt;
  }

  /**
   * The chain's next BATCH rows in `state`, in (nonce, id) order from where the last page ended; a
   * short page ends the walk, and the next begins it again, as does a page on which rows moved on
   * (see restartWalk). Each pass reads one page, so it stays bounded (and keeps its pace: a page a
   * pass), and a backlog larger than a page is reached page by page: with the first page read every
   * pass, rows past it went unfollowed for as long as the first ones stayed (500 stuck transactions
   * of one address hid every later nonce of the chain, decision 220).
   */
  async page(chain: Chain, state: "queued" | "sent"): Promise<Page> {
    const key = `${chain.chainId}:${state}`;
    const after = this.walks.get(key);
    let query = this.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("chain_id", "=", chain.chainId)
      .where("state", "in", stateLiterals([state]));
    if (after !== undefined)
      // The range on nonce alone, so the read starts in the state index at the walk's place.
      query = query
        .where("nonce", ">=", after.nonce)
        .where((eb) => eb.or([eb("nonce", ">", after.nonce), eb("id", ">", after.id)]));
    const rows = await query.orderBy("nonce").orderBy("id").limit(fixedLimit(BATCH)).execute();
    const last = rows.at(-1);
    const more = rows.length === BATCH && last !== undefined;
    if (more) this.walks.set(key, { nonce: Number(last.nonce), id: last.id });
    else this.walks.delete(key);
    return { rows, more };
  }

  /**
   * How many changes of state the tracker has asked for on `chain` so far: compared before and after
   * a page's work (per chain, as the chains' passes run at once).
   */
  moves(chain: Chain): number {
    return this.moved.get(chain.chainId) ?? 0;
  }

  /**
   * Begins the chain's walk over `state` again at its next page: rows of this page moved on, so the
   * lowest nonces, those the chain takes first, are the likeliest to move next (a burst's block is
   * followed from its first rows, page after page, as when every pass read the first page).
   */
  restartWalk(chain: Chain, state: "queued" | "sent"): void {
    this.walks.delete(`${chain.chainId}:${state}`);
  }

  /**
   * Keeps the heads of missing receipts only for the hashes followed since the chain's walk over
   * its sent rows began (with the recent drops of each of its passes), once the walk has `ended`:
   * marks of rows on a later page are kept until the walk has reached them.
   */
  followedAll(
    chain: Chain,
    page: Page,
    dropped: readonly Pick<TransactionsTable, "tx_hash">[],
    ended: boolean,
  ): void {
    const hashes = this.followed.get(chain.chainId) ?? [];
    for (const row of page.rows) hashes.push(row.tx_hash);
    for (const row of dropped) hashes.push(row.tx_hash);
    if (!ended) {
      this.followed.set(chain.chainId, hashes);
      return;
    }
    this.followed.delete(chain.chainId);
    this.absent.keepOnly(chain, hashes);
  }

  /**
   * A stored transaction that will never be mined leaves its nonce (and its own authorization's)
   * unused: the address's ledger converges to the chain, gaps filled by its signer where one is at
   * hand (an unlocked or unattended wallet); deferred to later passes when the chain cannot be read.
   */
  async settle(
    chain: Chain,
    row: Pick<TransactionsTable, "from_address" | "wallet_id" | "address_index" | "owner">,
  ): Promise<void> {
    const account =
      this.options.signers.get(row.from_address) ?? (await this.options.fallbackSigner?.(row.from_address));
    await this.options.pipeline.settle(
      chain,
      row.from_address,
      account === undefined
        ? undefined
        : { account, walletId: row.wallet_id, addressIndex: row.address_index, owner: row.owner },
    );
  }

  /** Sets the address's ledger from the chain's pending nonce and the records still on their way. */
  async realign(chain: Chain, address: string): Promise<void> {
    const pending = await nonceOf(chain, address);
    await this.options.ledger.realign(chain.chainId, address, pending);
  }
}
