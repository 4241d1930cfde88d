/** The tracker's follow job: a sent transaction to its receipt, resent when lost, fee-bumped when stuck. */
import type { Hex, LocalAccount } from "viem";
import { isChaingateError } from "../errors/chaingate-error.js";
import { NodeRpcError } from "../errors/rpc-errors.js";
import type { TransactionsTable } from "../store/schema.js";
import { inStoredTrace } from "../tracing/spans.js";
import type { Chain } from "../upstream/chain-registry.js";
import { type NodeReceipt, nodeRead, nonceOf, sendRawTransaction } from "../upstream/node-reads.js";
import { authorizationsOf } from "./authorizations.js";
import { replacementFees } from "./fee-bump.js";
import type { Fees } from "./fee-oracle.js";
import { heldInQueue } from "./held-in-queue.js";
import { revertOf } from "./revert-replay.js";
import { broadcast } from "./track-broadcast.js";
import type { TrackerContext } from "./tracker-context.js";
import { isAlreadyKnown } from "./tx-errors.js";

/**
 * Follows one sent row: its receipt when the node has one; else, past the waits, a resend of a
 * transaction the node lost or a replacement of one it holds. `lowest`: the row is its address's
 * lowest open nonce on this page (the one a node holding it back would be holding, see heldInQueue).
 */
export async function followSent(
  ctx: TrackerContext,
  chain: Chain,
  row: TransactionsTable,
  lowest = false,
): Promise<void> {
  let receipt: NodeReceipt | null;
  try {
    receipt = await ctx.sentReceipt(chain, row.tx_hash);
  } catch {
    return;
  }
  if (!receipt && row.replaces && (await originalWon(ctx, chain, row))) return;
  if (receipt) {
    ctx.bumpRefusedUntil.delete(row.id);
    // Its authorizations took their authorities' nonces (or, invalid, took none): their ledgers follow the chain.
    for (const { authority } of authorizationsOf(metadataOf(row)))
      if (authority.toLowerCase() !== row.from_address.toLowerCase())
        await ctx.realign(chain, authority).catch(() => undefined);
    const blockNumber = Number(BigInt(receipt.blockNumber));
    // The node is at least here: `latest` answers cached for an older head must not be served any more.
    chain.head?.observe(blockNumber);
    if (receipt.status === "0x1") {
      // A "stuck: ..." note from a refused fee bump no longer holds. With a finality of one block (the
      // transaction's own block) the receipt just read is the confirmation: the row goes on to
      // "confirmed" in the same write, without a block read of its own.
      await ctx.update(
        row,
        { state: "mined", block_number: blockNumber, block_hash: receipt.blockHash, error: null },
        ctx.finalityOf(chain) === 1 ? "confirmed" : undefined,
      );
    } else {
      await ctx.update(row, {
        state: "failed",
        block_number: blockNumber,
        block_hash: receipt.blockHash,
        error: await revertOf(chain, row, blockNumber),
      });
    }
    return;
  }
  const sentAt = row.sent_at ?? row.created_at;
  const age = ctx.now() - sentAt;
  const firstCheck = Math.min(ctx.options.resendAfterMs, ctx.options.replaceAfterMs);
  if (sentAt >= ctx.startedAt && age < firstCheck) {
    // Held back for good by the node's pool: replaced now, not after the waits (decision 245).
    if (await heldInQueue(ctx, chain, row, lowest, age)) {
      ctx.options.logger.info(
        { hash: row.tx_hash, nonce: row.nonce },
        "the node holds the address's next transaction in its queue; replacing it",
      );
      await replace(ctx, chain, row);
    }
    return;
  }
  const known = await nodeRead(chain, "eth_getTransactionByHash", [row.tx_hash], { batch: true }).catch(
    () => undefined,
  );
  if (known === null && (sentAt < ctx.startedAt || age >= ctx.options.resendAfterMs)) {
    ctx.options.logger.info({ hash: row.tx_hash }, "transaction left the node's pool; resending");
    await broadcast(ctx, chain, { ...row, state: "sent" });
  } else if (known && (age >= ctx.options.replaceAfterMs || (await heldNotReady(ctx, chain, row, age)))) {
    await replace(ctx, chain, row);
  }
}

/**
 * The node holds the transaction but does not count it as pending though its nonce is the
 * account's next: it will not mine it (anvil's pool never promotes a transaction queued behind a
 * nonce that an EIP-7702 authorization used instead of a transaction). Resending the same bytes
 * answers "already known"; a replacement at the same nonce is judged afresh.
 */
async function heldNotReady(
  ctx: TrackerContext,
  chain: Chain,
  row: TransactionsTable,
  age: number,
): Promise<boolean> {
  if (age < ctx.options.resendAfterMs) return false;
  const pending = await nonceOf(chain, row.from_address).catch(() => undefined);
  return pending === row.nonce;
}

/** When the transaction a replacement replaced is mined after all, the rows say so. */
export async function originalWon(
  ctx: TrackerContext,
  chain: Chain,
  row: TransactionsTable,
): Promise<boolean> {
  const original = await ctx.options.store.db
    .selectFrom("transactions")
    .selectAll()
    .where("id", "=", row.replaces!)
    .executeTakeFirst();
  if (original?.state !== "replaced") return false;
  const receipt = await ctx.receipt(chain, original.tx_hash).catch(() => null);
  if (!receipt) return false;
  await ctx.update(original, {
    state: "mined",
    block_number: Number(BigInt(receipt.blockNumber)),
    block_hash: receipt.blockHash,
    replaced_by: null,
  });
  await ctx.update(row, { state: "dropped", error: "the transaction it replaced was mined instead" });
  return true;
}

/** Replaces a stuck transaction: same nonce and contents, higher fees, signed by the cached signer. */
export async function replace(ctx: TrackerContext, chain: Chain, row: TransactionsTable): Promise<void> {
  const account =
    ctx.options.signers.get(row.from_address) ?? (await ctx.options.fallbackSigner?.(row.from_address));
  if (!account) return; // nobody unlocked this address recently: it waits, and is resent if lost
  const current = await ctx.options.fees.get(chain).catch(() => undefined);
  if (!current) return;
  const fees = replacementFees(row, current, ctx.options.maxFeePerGas);
  if (!fees) {
    ctx.options.logger.warn({ hash: row.tx_hash }, "stuck transaction already at the fee cap; not replaced");
    return;
  }
  if ((ctx.bumpRefusedUntil.get(row.id) ?? 0) > ctx.now()) return;
  await inStoredTrace(
    row.trace_parent,
    "chaingate.fee_bump",
    () => bumpFees(ctx, chain, row, account, fees),
    {
      "chaingate.transaction.id": row.id,
      "chaingate.transaction.hash": row.tx_hash,
      "chaingate.transaction.nonce": row.nonce,
    },
  );
}

/** Signs the replacement at the row's nonce (its trace the row's) and sends it; the row is then `replaced`. */
async function bumpFees(
  ctx: TrackerContext,
  chain: Chain,
  row: TransactionsTable,
  account: LocalAccount,
  fees: Fees,
): Promise<void> {
  let replacement: TransactionsTable;
  try {
    replacement = await ctx.options.pipeline.signAt(
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
        traceParent: row.trace_parent,
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
    ctx.bumpRefusedUntil.set(row.id, ctx.now() + ctx.options.replaceAfterMs);
    ctx.options.logger.warn(
      { hash: row.tx_hash, err: error },
      "fee bump refused by policy; transaction stuck",
    );
    await ctx.update(row, { error: `stuck: ${error.message}` });
    return;
  }
  ctx.bumpRefusedUntil.delete(row.id);
  try {
    await sendRawTransaction(chain, replacement.raw as Hex);
  } catch (error) {
    // Judged from the chain, as every send is (send-fate.ts): a node may take the bytes and still
    // answer an error, or the answer may be lost on its way back.
    const taken =
      (error instanceof NodeRpcError && isAlreadyKnown(error)) ||
      (await nodeRead(chain, "eth_getTransactionByHash", [replacement.tx_hash]).catch(() => null)) !== null;
    if (!taken) {
      await ctx.update(replacement, {
        state: "failed",
        error: `replacement not accepted: ${(error as Error).message}`,
      });
      return;
    }
  }
  await ctx.update(replacement, { state: "sent", sent_at: ctx.now(), broadcasts: 1 });
  await ctx.update(row, { state: "replaced", replaced_by: replacement.tx_hash });
  ctx.options.logger.info(
    { old: row.tx_hash, new: replacement.tx_hash, nonce: row.nonce },
    "replaced a stuck transaction",
  );
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
