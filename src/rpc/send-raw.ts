/** eth_sendRawTransaction and EIP-7966's eth_sendRawTransactionSync, served over any node (whether or not it has the latter). */
import {
  type Hex,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerialized,
  toHex,
} from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";
import { classifyNodeError } from "../errors/node-errors.js";
import { NodeRpcError } from "../errors/rpc-errors.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, nonceOf, sendRawTransaction } from "../upstream/node-reads.js";
import { type NodeReceipt, receiptWaiterOf } from "../upstream/receipt-waiter.js";

/** How long a synchronous send waits: the operator's default, and the most a caller may ask for. */
export interface SyncSendLimits {
  defaultMs: number;
  maxMs: number;
}

export interface SendHooks {
  /** Runs the node send (the dispatcher's fair share of upstream slots). */
  send?: (work: () => Promise<Hex>) => Promise<Hex>;
  /** Told the hash once the node took it (pending filters). */
  sent?: (hash: Hex) => Promise<void>;
}

/** Sends the bytes; a node that already has these very bytes took them (the client's send did succeed). */
export async function sendRaw(chain: Chain, raw: Hex): Promise<Hex> {
  try {
    return await sendRawTransaction(chain, raw);
  } catch (error) {
    if (!(error instanceof NodeRpcError)) throw error;
    const hash = keccak256(raw);
    // After a failover the same bytes may already be in the pool: the client's send did succeed.
    if (classifyNodeError(error.message, error.rpcCode, error.data) === "already_known") return hash;
    // Whatever the words (Ganache answers a resend "transaction underpriced", Hardhat a mined one
    // "Nonce too low"), a node that has these very bytes took them: the chain says so, not the message.
    const known = await nodeRead(chain, "eth_getTransactionByHash", [hash]).catch(() => null);
    if (known !== null) return hash;
    throw error;
  }
}

/**
 * EIP-7966's timeout: the caller's (milliseconds, a number or a hex quantity) up to the operator's
 * ceiling; absent or 0, the operator's default. A request above the ceiling waits the ceiling, not
 * the default the EIP names for an invalid one: a caller who asked for long waits as long as allowed.
 */
export function syncTimeoutMs(asked: unknown, limits: SyncSendLimits): number {
  const ms = typeof asked === "number" ? asked : typeof asked === "string" ? Number(BigInt(asked)) : 0;
  if (!Number.isFinite(ms) || ms <= 0) return limits.defaultMs;
  return Math.min(ms, limits.maxMs);
}

/** The receipt of a transaction already sent, waited for on the chain's heads; the EIP's code 4 when none comes in time. */
export async function awaitReceipt(chain: Chain, hash: Hex, timeoutMs: number): Promise<NodeReceipt> {
  const receipt = await receiptWaiterOf(chain).wait(hash, timeoutMs);
  if (receipt !== null) return receipt;
  throw new ChaingateError(
    `The transaction was added to the pool but was not mined in ${timeoutMs} ms; it may still be mined (look it up by tx_hash)`,
    { code: "RECEIPT_TIMEOUT", data: { tx_hash: hash, timeout_ms: timeoutMs } },
  );
}

/**
 * eth_sendRawTransactionSync: sends as eth_sendRawTransaction does, then answers the receipt. A
 * transaction whose nonce is past the sender's next one waits in the node's queue for a gap that
 * may never fill: that is answered at once (the EIP's code 5, with the nonce expected) rather than
 * after the whole timeout.
 */
export async function sendRawSync(
  chain: Chain,
  raw: Hex,
  timeoutMs: number,
  hooks: SendHooks = {},
): Promise<NodeReceipt> {
  let hash: Hex;
  try {
    hash = await (hooks.send ?? ((work) => work()))(() => sendRaw(chain, raw));
  } finally {
    chain.head?.refresh();
  }
  await hooks.sent?.(hash);
  const waiting = awaitReceipt(chain, hash, timeoutMs);
  const gap = nonceGap(chain, raw);
  return Promise.race([
    waiting,
    gap.then((expected) => {
      if (expected === undefined) return waiting;
      throw new ChaingateError(
        `The transaction was added to the pool but cannot be mined yet: its nonce is past the sender's next (${expected})`,
        { code: "TRANSACTION_NOT_READY", data: { tx_hash: hash, expected_nonce: expected } },
      );
    }),
  ]);
}

/** The sender's next nonce when `raw`'s nonce is past it (a gap); undefined when it is not, or cannot be told. */
async function nonceGap(chain: Chain, raw: Hex): Promise<Hex | undefined> {
  try {
    const tx = parseTransaction(raw);
    if (tx.nonce === undefined) return undefined;
    const from = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
    const next = await nonceOf(chain, from);
    return tx.nonce > next ? toHex(next) : undefined;
  } catch {
    // Unreadable bytes were already refused by the node; an unanswered read leaves the wait to decide.
    return undefined;
  }
}
