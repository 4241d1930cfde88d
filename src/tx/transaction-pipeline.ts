/** The one pipeline for every signed operation: build, sign, record, broadcast; then the tracker follows. */
import type { Transaction } from "kysely";
import type { Logger } from "pino";
import type { Hex } from "viem";
import { NodeRpcError } from "../errors/rpc-errors.js";
import { keccak256OfHex } from "../keys/keccak.js";
import {
  type Admission,
  DailyLimitDenied,
  type PolicyGuard,
  policyDenied,
} from "../policies/policy-guard.js";
import type { Store } from "../store/database.js";
import type { Database, TransactionsTable, TxState } from "../store/schema.js";
import { currentTraceParent, inSpan, tracingOn } from "../tracing/spans.js";
import type { Chain } from "../upstream/chain-registry.js";
import { sendRawTransaction } from "../upstream/node-reads.js";
import type { FeeOracle, Fees } from "./fee-oracle.js";
import { type ConvergenceDeps, converge } from "./nonce-convergence.js";
import {
  MAX_HANDED_OUT,
  NonceGuard,
  NonceHandedOut,
  nonceAlreadySigned,
  passHandedOut,
} from "./nonce-guard.js";
import type { NonceLedger } from "./nonce-ledger.js";
import { prepareSigning, signingRequest } from "./prepare-signing.js";
import {
  NotTogether,
  type RecordItem,
  type RecordTogetherDeps,
  recordsTogether,
  recordTogether,
  TakenBack,
} from "./record-together.js";
import { fateOf } from "./send-fate.js";
import { authorizationsAt, queuedRow, type SignedOperation, signOperation } from "./signed-operation.js";
import type { SignerRegistry } from "./signer-registry.js";
import { TransactionStates } from "./transaction-states.js";
import { asFault, nonceNotNext, SignedNotSentError, sendRejected } from "./tx-errors.js";

export type { SignedOperation } from "./signed-operation.js";

export interface Submitted {
  id: string;
  txHash: Hex;
  nonce: number;
  state: TxState;
}

export interface PipelineOptions {
  store: Store;
  ledger: NonceLedger;
  fees: FeeOracle;
  /** Gas limit = estimate x (100 + margin) / 100. */
  gasMarginPercent: number;
  logger: Logger;
  signers: SignerRegistry;
  /** Every signature asks it first (policies, rolling limits, the audit log). */
  guard: PolicyGuard;
  now?: () => number;
}

/** A nonce taken by someone else is retried with a fresh one, a bounded number of times. */
const NONCE_RETRIES = 3;

/**
 * Plain sends recorded together at most, each such record a group of its own (decision 216): at 32
 * connections a burst goes on in two parts that overlap, one part's commit and sends on their way
 * while the other is signed and written. Parts of 8 cost more commits than the overlap gave back.
 */
const RECORD_APART = 16;

/** Group-commit lock key: the row a job locks first (see GroupCommit). */
const ledgerKey = (chainId: number, address: string) => `ledger:${chainId}:${address.toLowerCase()}`;

export class TransactionPipeline {
  private readonly now: () => number;
  private readonly nonces = new NonceGuard();
  private readonly states: TransactionStates;
  private readonly convergence: ConvergenceDeps;

  private readonly together: RecordTogetherDeps;
  /** Requests recorded with others (record-together.ts) and on their own (for tests and the curious). */
  readonly recorded = { together: 0, alone: 0 };

  constructor(private readonly options: PipelineOptions) {
    this.now = options.now ?? Date.now;
    this.states = new TransactionStates(options.store, this.now);
    this.convergence = { ...options, states: this.states, now: this.now };
    this.together = { ledger: options.ledger, states: this.states, guard: options.guard, now: this.now };
  }

  /**
   * Signs, records and sends `op`. With tracing on, its life is one trace: this span (policy, sign,
   * send inside it) is stored with the row, and the tracker's and webhooks' spans join it later.
   */
  submit(op: SignedOperation): Promise<Submitted> {
    if (!tracingOn()) return this.submitNow(op);
    const attributes = {
      "chaingate.chain_id": op.chain.chainId,
      "chaingate.transaction.from": op.account.address,
      "chaingate.transaction.kind": op.kind,
    };
    return inSpan(
      "chaingate.transaction",
      async (span) => {
        const submitted = await this.submitNow({ ...op, traceParent: currentTraceParent() });
        span?.setAttributes({
          "chaingate.transaction.id": submitted.id,
          "chaingate.transaction.hash": submitted.txHash,
          "chaingate.transaction.nonce": submitted.nonce,
        });
        return submitted;
      },
      { attributes },
    );
  }

  private async submitNow(op: SignedOperation): Promise<Submitted> {
    const from = op.account.address;
    this.options.signers.remember(from, op.account);
    const { gas, fees } = await inSpan("chaingate.prepare", () => prepareSigning(op, this.options));
    const request = signingRequest(op, gas, fees);
    // A send that may be recorded with others has its policies read inside the record's
    // transaction when its wallet and key had none (decisions 179, 211).
    const admission =
      (recordsTogether(op) && this.options.guard.admitLater(request)) ||
      (await inSpan("chaingate.policy", () => this.options.guard.admit(request)));

    for (let attempt = 0, skipped = 0; ; attempt++) {
      let row: TransactionsTable;
      try {
        row = await inSpan("chaingate.sign", () => this.record(op, gas, fees, admission));
      } catch (error) {
        if (!(error instanceof NonceHandedOut) || skipped++ >= MAX_HANDED_OUT) throw error;
        await passHandedOut(op.chain, op.account.address, error, this.options);
        attempt--;
        continue;
      }
      let refusal: NodeRpcError | undefined;
      try {
        await inSpan("chaingate.send", () => sendRawTransaction(op.chain, row.raw as Hex, { batch: true }));
      } catch (error) {
        // We cannot tell whether the node took it: it stays queued and the tracker resends the
        // stored bytes, so the nonce is neither lost nor reused.
        if (!(error instanceof NodeRpcError)) throw new SignedNotSentError((error as Error).message, row);
        refusal = error;
      }
      const fate =
        refusal === undefined ? "taken" : await fateOf(op.chain, row, refusal, this.options.logger);
      if (fate === "nonce_used") {
        await this.markFailed(row, `nonce ${row.nonce} already used on chain; resent with a new nonce`);
        await this.settle(op.chain, from, op);
        if (attempt < NONCE_RETRIES && op.nonce === undefined) continue;
        throw sendRejected(refusal!);
      }
      if (fate === "waiting")
        throw new SignedNotSentError(
          `the node did not take nonce ${row.nonce} before the ones under it (${refusal!.message}); it stays queued and is sent again`,
          row,
        );
      if (fate === "refused") {
        await this.refuse(op, row, refusal!.message);
        throw sendRejected(refusal!);
      }
      op.chain.head?.refresh();
      this.markSentLater(row);
      return { id: row.id, txHash: row.tx_hash as Hex, nonce: row.nonce, state: "sent" };
    }
  }

  /**
   * Signs without sending or recording (eth_signTransaction). The nonce is the caller's, or the
   * ledger's next one not yet handed out: nothing is reserved in the ledger, so no gap can be left.
   * The bytes are kept as that nonce's one payload (see NonceGuard): a different payload at it is
   * refused, and a later send that reaches it broadcasts them and takes the next.
   */
  async signOnly(op: SignedOperation): Promise<{ raw: Hex; nonce: number }> {
    const { gas, fees } = await prepareSigning(op, this.options);
    const admission = await this.options.guard.admit(signingRequest(op, gas, fees));
    const { chainId } = op.chain;
    const from = op.account.address;
    // Bytes handed back can be broadcast by anyone: they count against the rolling limits as if sent.
    return this.underPolicy(admission, async (trx) => {
      await this.options.ledger.lock(trx, chainId, from);
      await this.options.guard.withinDay(trx, admission);
      const next = await this.options.ledger.peek(chainId, from, trx);
      let nonce = op.nonce ?? next;
      let raw = await signOperation(op, gas, fees, nonce);
      // Bytes this process just signed: hashed once each, natively (see keys/keccak.ts).
      let txHash = keccak256OfHex(raw);
      if (op.nonce === undefined) {
        for (;;) {
          const handed = await this.nonces.handedOutAt(trx, chainId, from, nonce);
          if (handed === undefined || handed.txHash === txHash) break;
          nonce++;
          raw = await signOperation(op, gas, fees, nonce);
          txHash = keccak256OfHex(raw);
        }
      }
      await this.nonces.handOut(trx, chainId, from, nonce, { txHash, raw }, this.now(), next);
      await this.options.guard.allowed(trx, admission, null, txHash);
      return { raw, nonce };
    });
  }

  /**
   * Runs `work` in a database transaction (shared with the other requests of this turn, see
   * GroupCommit) that starts by locking the address's nonce row; a rolling limit it fails is audited
   * after its rollback.
   */
  private async underPolicy<T>(admission: Admission, work: (trx: Transaction<Database>) => Promise<T>) {
    const { chainId, address } = admission.request;
    try {
      return await this.options.store.group.run(work, ledgerKey(chainId, address));
    } catch (error) {
      if (!(error instanceof DailyLimitDenied)) throw error;
      await this.options.guard.refused(admission, error.denial);
      throw policyDenied(error.denial);
    }
  }

  /**
   * Records that `row` was broadcast, off the answer's path and without a commit of its own (a
   * lazy job: the moves of 20 ms are written together, apart from the requests' groups; a burst's
   * rows share one statement, see TransactionStates.move). The answer needs only what was durable before the send: the signed
   * bytes at their nonce. Should this process stop first, the row is still `queued` and the tracker
   * sends the same bytes again, which the node knows already (send-fate.ts: taken).
   */
  private markSentLater(row: TransactionsTable): void {
    this.states
      .move(row, { set: { state: "sent", broadcasts: 1 }, stamp: ["sent_at"] }, true)
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error, tx: row.tx_hash },
          "could not record a sent transaction; the tracker resends its stored bytes",
        ),
      );
  }

  /** The address's next nonce as chaingate counts it (its queued transactions included); nothing is taken. */
  async nextNonce(chain: Chain, address: string): Promise<number> {
    try {
      await this.options.ledger.ensureSynced(chain, address);
      return await this.options.ledger.peek(chain.chainId, address);
    } catch (error) {
      throw asFault(error, "reading the account nonce");
    }
  }

  /**
   * Allocates the nonce, checks the rolling limits under its lock, signs and stores the bytes (with
   * the spend, the audit entry and the "queued" event) in one database transaction, before any broadcast.
   */
  private async record(
    op: SignedOperation,
    gas: bigint,
    fees: Fees,
    admission: Admission,
  ): Promise<TransactionsTable> {
    if (recordsTogether(op) && admission.limits.length === 0) {
      const item: RecordItem = { op, gas, fees, admission };
      try {
        await this.options.store.group.join(
          "record",
          item,
          (trx, items) => recordTogether(trx, items, this.together),
          ledgerKey(op.chain.chainId, op.account.address),
          { apart: RECORD_APART },
        );
      } catch (error) {
        // A failed commit rejects here, as a request's own would: nothing is recorded again.
        if (!(error instanceof TakenBack)) throw error;
      }
      if (item.row) {
        this.recorded.together++;
        return item.row;
      }
      // The batch was taken back whole: each of its requests is recorded on its own, and hears its
      // own outcome (a signer that fails, bytes handed out at a nonce).
      if (!(item.apart instanceof NotTogether))
        this.options.logger.debug({ err: item.apart }, "joined record taken back; recording alone");
    }
    // Policies not yet read (the record found one bound to the wallet or the key): admitted now.
    const admitted = admission.unread ? await this.options.guard.admit(admission.request) : admission;
    return this.recordAlone(op, gas, fees, admitted);
  }

  private async recordAlone(
    op: SignedOperation,
    gas: bigint,
    fees: Fees,
    admission: Admission,
  ): Promise<TransactionsTable> {
    const { ledger, guard } = this.options;
    this.recorded.alone++;
    return this.underPolicy(admission, async (trx) => {
      const nonce = await ledger.allocate(trx, op.chain.chainId, op.account.address);
      // A caller's own nonce must be the next one; otherwise nothing is recorded (the transaction rolls back).
      if (op.nonce !== undefined && op.nonce !== nonce) throw nonceNotNext(op.nonce, nonce);
      const handed = await this.nonces.handedOutAt(trx, op.chain.chainId, op.account.address, nonce);
      if (handed) {
        if (op.nonce !== undefined) throw nonceAlreadySigned(nonce, handed.txHash);
        throw new NonceHandedOut(nonce, handed.raw!);
      }
      // Each authorization takes its authority's nonce when the transaction runs.
      for (const { authority, authorization } of await authorizationsAt(op, nonce))
        await ledger.raiseTo(trx, op.chain.chainId, authority, authorization.nonce + 1);
      await guard.withinDay(trx, admission);
      const row = await this.signAndInsert(trx, op, gas, fees, nonce);
      await guard.allowed(trx, admission, row.id, row.tx_hash);
      return row;
    });
  }

  /** Signs `op` at a given nonce and stores it as queued (used by the tracker for fee-bump replacements). */
  async signAt(
    op: SignedOperation,
    gas: bigint,
    fees: Fees,
    nonce: number,
    replaces: string,
  ): Promise<TransactionsTable> {
    // A fee bump is judged like any signature (a fee cap may refuse it); it spends nothing new.
    const admission = await this.options.guard.admit(signingRequest(op, gas, fees, "replacement"));
    return this.options.store.db.transaction().execute(async (trx) => {
      const row = await this.signAndInsert(trx, op, gas, fees, nonce, replaces);
      await this.options.guard.allowed(trx, admission, row.id, row.tx_hash);
      return row;
    });
  }

  private async signAndInsert(
    trx: Transaction<Database>,
    op: SignedOperation,
    gas: bigint,
    fees: Fees,
    nonce: number,
    replaces: string | null = null,
  ): Promise<TransactionsTable> {
    const authorizations = await authorizationsAt(op, nonce);
    const raw = await signOperation(op, gas, fees, nonce, authorizations);
    const now = this.now();
    const row = queuedRow(op, { gas, fees, nonce, raw, authorizations, replaces, now });
    await this.states.create(trx, row);
    return row;
  }

  private async markFailed(row: TransactionsTable, reason: string): Promise<void> {
    await this.options.store.db.transaction().execute((trx) => this.failIn(trx, row, reason));
  }

  private failIn(trx: Transaction<Database>, row: TransactionsTable, reason: string): Promise<void> {
    return this.states.moveIn(trx, row, { set: { state: "failed", error: reason } });
  }

  /**
   * The node refused the transaction, so its nonce (and its own authorization's) was never used:
   * the ledger converges to the chain, gaps before later records filled (see nonce-convergence.ts).
   */
  private async refuse(op: SignedOperation, row: TransactionsTable, reason: string): Promise<void> {
    await this.markFailed(row, reason);
    await this.settle(op.chain, op.account.address, op);
  }

  /** Addresses whose convergence failed (the node or the store was away): the tracker tries them again each pass. */
  private readonly unsettled = new Map<
    string,
    { chain: Chain; address: string; from: Parameters<TransactionPipeline["converge"]>[2] }
  >();

  /**
   * Converges now, or, when the chain or the store cannot be read, on the tracker's next passes:
   * a refusal is answered whatever happens to its clean-up.
   */
  async settle(
    chain: Chain,
    address: string,
    from?: Parameters<TransactionPipeline["converge"]>[2],
  ): Promise<void> {
    const key = `${chain.chainId}:${address.toLowerCase()}`;
    try {
      await this.converge(chain, address, from);
      this.unsettled.delete(key);
    } catch (error) {
      this.options.logger.warn({ err: error, chainId: chain.chainId, address }, "nonce convergence deferred");
      const known = this.unsettled.get(key);
      this.unsettled.set(key, { chain, address, from: from ?? known?.from });
    }
  }

  /** The tracker's pass: every address whose convergence was deferred, tried again. */
  async settleDeferred(): Promise<void> {
    for (const { chain, address, from } of [...this.unsettled.values()])
      await this.settle(chain, address, from);
  }

  /**
   * The address's ledger set from the chain and its live records, gaps filled with the signer of
   * `from` (its wallet and owner on the fillers); without one, the gaps wait for the next signature.
   */
  converge(
    chain: Chain,
    address: string,
    from?: Pick<SignedOperation, "account"> & Partial<SignedOperation>,
  ): Promise<{ next: number; filled: number[] }> {
    const template: SignedOperation | undefined =
      from === undefined
        ? undefined
        : {
            walletId: null,
            addressIndex: null,
            to: null,
            data: "0x",
            value: 0n,
            kind: "filler",
            ...from,
            chain,
          };
    return converge(this.convergence, chain, address, template);
  }
}
