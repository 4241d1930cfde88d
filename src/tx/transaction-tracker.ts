/** Follows every signed transaction to its receipt and confirmations; resends what the node lost. */
import type { Logger } from "pino";
import type { Hex, LocalAccount } from "viem";
import { isChaingateError } from "../errors/chaingate-error.js";
import { NodeRpcError } from "../errors/rpc-errors.js";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { Store } from "../store/database.js";
import type { TransactionsTable, TxState } from "../store/schema.js";
import { askHead } from "../upstream/ask-head.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { authorizationsOf } from "./authorizations.js";
import { replacementFees } from "./fee-bump.js";
import type { FeeOracle } from "./fee-oracle.js";
import type { NonceLedger } from "./nonce-ledger.js";
import { revertOf } from "./revert-replay.js";
import type { SignerRegistry } from "./signer-registry.js";
import type { TransactionPipeline } from "./transaction-pipeline.js";
import { heldByPipeline, TransactionStates } from "./transaction-states.js";
import { isAlreadyKnown, isNonceConflict } from "./tx-errors.js";

export interface TrackerOptions {
  store: Store;
  chains: ChainRegistry;
  logger: Logger;
  /** Blocks (including the transaction's own) before a mined transaction counts as confirmed. */
  confirmations: number;
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

interface Receipt {
  status: string;
  blockNumber: string;
  blockHash: string;
}

/** Rows handled per state and chain per pass, so a backlog cannot make one pass unbounded. */
const BATCH = 500;

/**
 * After a chain may have lost state (a restarted node, a head that went back), records mined in this
 * many blocks below the head, and any above it, are checked against the chain again.
 */
export const RECONCILE_DEPTH = 64;

export class TransactionTracker {
  private readonly loop: BackgroundLoop;
  private readonly now: () => number;
  private readonly states: TransactionStates;
  /** Transactions sent before this process started may have left a node's pool with it: check them at once. */
  private readonly startedAt: number;
  /** Chains to check against the chain again on the next pass (all of them at start). */
  private readonly toReconcile = new Set<number>();
  private readonly unsubscribe: (() => void)[] = [];
  /** Stuck transactions whose fee bump a policy refused: not tried again before this time. */
  private readonly bumpRefusedUntil = new Map<string, number>();

  constructor(private readonly options: TrackerOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.states = new TransactionStates(options.store, this.now);
    this.loop = new BackgroundLoop({
      name: "transaction tracker pass",
      everyMs: options.intervalMs,
      pass: () => this.tick(),
      logger: options.logger,
    });
    for (const chain of options.chains.all()) {
      this.toReconcile.add(chain.chainId);
      const off = chain.head?.onReset(() => this.toReconcile.add(chain.chainId));
      if (off) this.unsubscribe.push(off);
    }
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    await this.loop.stop();
  }

  /** One pass over every chain; exposed so tests and shutdown can drive it. */
  async tick(): Promise<void> {
    await Promise.all(this.options.chains.all().map((chain) => this.tickChain(chain)));
  }

  private rows(chain: Chain, states: TransactionsTable["state"][]) {
    return this.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("chain_id", "=", chain.chainId)
      .where("state", "in", states)
      .orderBy("nonce")
      .limit(BATCH)
      .execute();
  }

  /**
   * Moves a row on, if no one else did first; a new state is announced in the same database
   * transaction. Rows moved the same way in one turn (a pass's rows of one block, from the same
   * state, with the same values) share one job and one `UPDATE … WHERE id IN (…)`: one statement
   * and one savepoint for the block, not one each. Each caller hears once the commit is durable.
   */
  private update(row: TransactionsTable, set: Partial<TransactionsTable>, then?: TxState): Promise<void> {
    return this.states.move(row, { set, ...(then === undefined ? {} : { then }) });
  }

  private async tickChain(chain: Chain): Promise<void> {
    if (this.toReconcile.delete(chain.chainId)) {
      try {
        await this.reconcile(chain);
      } catch (error) {
        this.toReconcile.add(chain.chainId);
        throw error;
      }
    }
    const queued = await this.rows(chain, ["queued"]);
    const now = this.now();
    for (const row of queued) {
      // A row queued since this tracker started may belong to a pipeline that is broadcasting it
      // right now: sending it too could get "nonce too low" back there and a second transaction
      // signed. Rows from before the start (a crash) go at once; later ones after a grace time.
      if (heldByPipeline(row, this.startedAt, now)) continue;
      await this.broadcast(chain, row);
    }
    const sent = await this.rows(chain, ["sent"]);
    await Promise.all(sent.map((row) => this.followSent(chain, row)));
    const mined = await this.rows(chain, ["mined"]);
    if (mined.length > 0) await this.confirm(chain, mined);
  }

  /**
   * Checks the records of the last RECONCILE_DEPTH blocks against the chain: a transaction it no
   * longer has goes back to queued (the next step resends its stored bytes, in nonce order), one it
   * has elsewhere gets its new block; every sent one is offered again (the node's pool may be gone).
   * Then each touched address's ledger is set to what the chain and the live records say.
   */
  async reconcile(chain: Chain): Promise<void> {
    const { store, logger } = this.options;
    const head = await askHead(chain);
    const recorded = await store.db
      .selectFrom("transactions")
      .selectAll()
      .where("chain_id", "=", chain.chainId)
      .where("state", "in", ["mined", "confirmed", "failed"])
      .where("block_number", ">=", Math.max(0, head - RECONCILE_DEPTH))
      .orderBy("nonce")
      .limit(BATCH)
      .execute();
    const touched = new Set<string>();
    let lost = 0;
    // The receipts go out together (batched), so a restart checks 500 records in a few requests;
    // a receipt that cannot be read fails the pass, which is tried again (the chain stays marked).
    const receipts = await Promise.all(recorded.map((row) => this.receipt(chain, row.tx_hash)));
    await Promise.all(
      recorded.map((row, i) => {
        const receipt = receipts[i];
        if (receipt?.blockHash === row.block_hash) return undefined;
        touched.add(row.from_address);
        if (receipt) {
          return this.update(row, {
            state: receipt.status === "0x1" ? "mined" : "failed",
            block_number: Number(BigInt(receipt.blockNumber)),
            block_hash: receipt.blockHash,
          });
        }
        lost++;
        return this.update(row, { state: "queued", block_number: null, block_hash: null, error: null });
      }),
    );
    const now = this.now();
    const queued = (await this.rows(chain, ["queued", "sent"])).filter(
      // A row its pipeline is broadcasting right now is left to it, as in a normal pass.
      (row) => !heldByPipeline(row, this.startedAt, now),
    );
    for (const row of queued) {
      touched.add(row.from_address);
      await this.broadcast(chain, row);
    }
    for (const address of touched) await this.realign(chain, address);
    if (lost > 0 || queued.length > 0)
      logger.warn(
        { chainId: chain.chainId, lost, resent: queued.length },
        "reconciled records with the chain",
      );
  }

  /** Sets the address's ledger from the chain's pending nonce and the records still on their way. */
  private async realign(chain: Chain, address: string): Promise<void> {
    const pending = Number(
      BigInt(
        String(await chain.pool.call({ method: "eth_getTransactionCount", params: [address, "pending"] })),
      ),
    );
    await this.options.ledger.realign(chain.chainId, address, pending);
  }

  /** Sends stored bytes (after a crash, a fault, or a drop); the outcome moves the row on. */
  private async broadcast(chain: Chain, row: TransactionsTable): Promise<void> {
    try {
      await chain.pool.call({ method: "eth_sendRawTransaction", params: [row.raw], batch: true });
    } catch (error) {
      if (!(error instanceof NodeRpcError)) return; // node unreachable: next pass
      if (!isAlreadyKnown(error)) {
        if (isNonceConflict(error)) {
          // Either our own transaction was mined already (its receipt will say so) or another took the nonce.
          const receipt = await this.receipt(chain, row.tx_hash);
          if (receipt) {
            await this.update(row, { state: "sent", sent_at: row.sent_at ?? this.now() });
            return;
          }
          await this.update(row, {
            state: "dropped",
            error: `nonce ${row.nonce} was used by another transaction`,
          });
          return;
        }
        await this.update(row, { state: "failed", error: error.message });
        return;
      }
    }
    await this.update(row, { state: "sent", sent_at: this.now(), broadcasts: row.broadcasts + 1 });
  }

  private async receipt(chain: Chain, hash: string): Promise<Receipt | null> {
    // One pass asks for many receipts at once: they go to the node as one batch.
    return (await chain.pool.call({
      method: "eth_getTransactionReceipt",
      params: [hash],
      batch: true,
    })) as Receipt | null;
  }

  private async followSent(chain: Chain, row: TransactionsTable): Promise<void> {
    let receipt: Receipt | null;
    try {
      receipt = await this.receipt(chain, row.tx_hash);
    } catch {
      return;
    }
    if (!receipt && row.replaces && (await this.originalWon(chain, row))) return;
    if (receipt) {
      this.bumpRefusedUntil.delete(row.id);
      // Its authorizations took their authorities' nonces (or, invalid, took none): their ledgers follow the chain.
      for (const { authority } of authorizationsOf(metadataOf(row)))
        if (authority.toLowerCase() !== row.from_address.toLowerCase())
          await this.realign(chain, authority).catch(() => undefined);
      const blockNumber = Number(BigInt(receipt.blockNumber));
      // The node is at least here: `latest` answers cached for an older head must not be served any more.
      chain.head?.observe(blockNumber);
      if (receipt.status === "0x1") {
        // A "stuck: ..." note from a refused fee bump no longer holds. With one confirmation (the
        // transaction's own block) the receipt just read is the confirmation: the row goes on to
        // "confirmed" in the same write, without a block read of its own.
        await this.update(
          row,
          { state: "mined", block_number: blockNumber, block_hash: receipt.blockHash, error: null },
          this.options.confirmations === 1 ? "confirmed" : undefined,
        );
      } else {
        await this.update(row, {
          state: "failed",
          block_number: blockNumber,
          block_hash: receipt.blockHash,
          error: await revertOf(chain, row, blockNumber),
        });
      }
      return;
    }
    const sentAt = row.sent_at ?? row.created_at;
    const age = this.now() - sentAt;
    const firstCheck = Math.min(this.options.resendAfterMs, this.options.replaceAfterMs);
    if (sentAt >= this.startedAt && age < firstCheck) return;
    const known = await chain.pool
      .call({ method: "eth_getTransactionByHash", params: [row.tx_hash], batch: true })
      .catch(() => undefined);
    if (known === null && (sentAt < this.startedAt || age >= this.options.resendAfterMs)) {
      this.options.logger.info({ hash: row.tx_hash }, "transaction left the node's pool; resending");
      await this.broadcast(chain, { ...row, state: "sent" });
    } else if (known && age >= this.options.replaceAfterMs) {
      await this.replace(chain, row);
    }
  }

  /** When the transaction a replacement replaced is mined after all, the rows say so. */
  private async originalWon(chain: Chain, row: TransactionsTable): Promise<boolean> {
    const original = await this.options.store.db
      .selectFrom("transactions")
      .selectAll()
      .where("id", "=", row.replaces!)
      .executeTakeFirst();
    if (original?.state !== "replaced") return false;
    const receipt = await this.receipt(chain, original.tx_hash).catch(() => null);
    if (!receipt) return false;
    await this.update(original, {
      state: "mined",
      block_number: Number(BigInt(receipt.blockNumber)),
      block_hash: receipt.blockHash,
      replaced_by: null,
    });
    await this.update(row, { state: "dropped", error: "the transaction it replaced was mined instead" });
    return true;
  }

  /** Replaces a stuck transaction: same nonce and contents, higher fees, signed by the cached signer. */
  private async replace(chain: Chain, row: TransactionsTable): Promise<void> {
    const account =
      this.options.signers.get(row.from_address) ?? (await this.options.fallbackSigner?.(row.from_address));
    if (!account) return; // nobody unlocked this address recently: it waits, and is resent if lost
    const current = await this.options.fees.get(chain).catch(() => undefined);
    if (!current) return;
    const fees = replacementFees(row, current, this.options.maxFeePerGas);
    if (!fees) {
      this.options.logger.warn(
        { hash: row.tx_hash },
        "stuck transaction already at the fee cap; not replaced",
      );
      return;
    }
    if ((this.bumpRefusedUntil.get(row.id) ?? 0) > this.now()) return;
    let replacement: TransactionsTable;
    try {
      replacement = await this.options.pipeline.signAt(
        {
          chain,
          account,
          walletId: row.wallet_id,
          addressIndex: row.address_index,
          to: row.to_address as Hex | null,
          data: row.data as Hex,
          value: BigInt(row.value),
          kind: row.kind,
          ...withStoredAuthorizations(row),
          ...(row.transport_id === null ? {} : { transportId: row.transport_id }),
          owner: row.owner,
        },
        BigInt(row.gas_limit),
        fees,
        row.nonce,
        row.id,
      );
    } catch (error) {
      if (!isChaingateError(error) || error.code !== "POLICY_DENIED") throw error;
      // Not sent: the transaction stays as it is, reported stuck, and is tried again later
      // (the fees or the policy may have changed by then).
      this.bumpRefusedUntil.set(row.id, this.now() + this.options.replaceAfterMs);
      this.options.logger.warn(
        { hash: row.tx_hash, err: error },
        "fee bump refused by policy; transaction stuck",
      );
      await this.update(row, { error: `stuck: ${error.message}` });
      return;
    }
    this.bumpRefusedUntil.delete(row.id);
    try {
      await chain.pool.call({ method: "eth_sendRawTransaction", params: [replacement.raw] });
    } catch (error) {
      if (!(error instanceof NodeRpcError && isAlreadyKnown(error))) {
        await this.update(replacement, {
          state: "failed",
          error: `replacement not accepted: ${(error as Error).message}`,
        });
        return;
      }
    }
    await this.update(replacement, { state: "sent", sent_at: this.now(), broadcasts: 1 });
    await this.update(row, { state: "replaced", replaced_by: replacement.tx_hash });
    this.options.logger.info(
      { old: row.tx_hash, new: replacement.tx_hash, nonce: row.nonce },
      "replaced a stuck transaction",
    );
  }

  /** Confirms by block hash, so a reorg that replaced the block sends the row back to "sent". */
  private async confirm(chain: Chain, rows: TransactionsTable[]): Promise<void> {
    let head: number;
    try {
      head = await askHead(chain);
    } catch {
      return;
    }
    const due = rows.filter((row) => head - row.block_number! + 1 >= this.options.confirmations);
    // One read per block, all of a pass in one batch; a block that could not be read is left for
    // the next pass (undefined), one the node no longer has (null) sends its rows back.
    const numbers = [...new Set(due.map((row) => row.block_number!))];
    const hashes = new Map(
      await Promise.all(
        numbers.map(async (number) => {
          const block = (await chain.pool
            .call({
              method: "eth_getBlockByNumber",
              params: [`0x${number.toString(16)}`, false],
              batch: true,
            })
            .catch(() => undefined)) as { hash: string } | null | undefined;
          return [number, block === undefined ? undefined : (block?.hash ?? null)] as const;
        }),
      ),
    );
    // Updates go out together (one group commit).
    await Promise.all(
      due.map((row) => {
        const hash = hashes.get(row.block_number!);
        if (hash === undefined) return undefined;
        return hash === row.block_hash
          ? this.update(row, { state: "confirmed" })
          : this.update(row, { state: "sent", block_number: null, block_hash: null });
      }),
    );
  }
}

function metadataOf(row: TransactionsTable): Record<string, unknown> | undefined {
  return row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : undefined;
}

/** A fee bump keeps the metadata, and carries the same authorizations (the sender's own included, at the same nonce + 1). */
function withStoredAuthorizations(row: TransactionsTable) {
  const metadata = metadataOf(row);
  if (!metadata) return {};
  const signed = authorizationsOf(metadata);
  return signed.length === 0 ? { metadata } : { metadata, authorizations: { signed } };
}
