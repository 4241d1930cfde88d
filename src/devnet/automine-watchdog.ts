/** Repairs what an automining anvil's pool gets wrong under a burst: ready transactions it neither mines nor promotes. */
import type { Logger } from "pino";
import { type Hex, keccak256, serializeTransaction, type TransactionSerializable } from "viem";
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import { fieldOf } from "../upstream/node-reads.js";

export interface AutomineWatchdogOptions {
  url: string;
  logger: Logger;
  intervalMs?: number;
}

async function call(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body: unknown = await response.json();
  const error = fieldOf(body, "error");
  if (error !== undefined) throw new Error(String(fieldOf(error, "message") ?? "the node refused the call"));
  return fieldOf(body, "result");
}

interface PoolTransaction {
  hash: Hex;
  type: string;
  chainId?: string;
  nonce: string;
  gas: string;
  gasPrice?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  to: Hex | null;
  value: string;
  input: Hex;
  accessList?: { address: Hex; storageKeys: Hex[] }[];
  r: Hex;
  s: Hex;
  yParity?: string;
  v: string;
}

type Pool = Record<string, Record<string, PoolTransaction>>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A map of txpool_content (sender, nonce, transaction); each transaction is proven by rawOf hashing back to it. */
const isPool = (v: unknown): v is Pool =>
  isObject(v) &&
  Object.values(v).every(
    (byNonce) =>
      isObject(byNonce) && Object.values(byNonce).every((tx) => isObject(tx) && typeof tx.hash === "string"),
  );

/** The transaction's own signed bytes, rebuilt from the node's fields; undefined unless they hash back to it. */
function rawOf(tx: PoolTransaction): Hex | undefined {
  const base = {
    chainId: Number(tx.chainId ?? "0x0"),
    nonce: Number(tx.nonce),
    gas: BigInt(tx.gas),
    value: BigInt(tx.value),
    data: tx.input,
    ...(tx.to ? { to: tx.to } : {}),
  };
  const accessList = tx.accessList ?? [];
  let unsigned: TransactionSerializable;
  if (tx.type === "0x2") {
    unsigned = {
      ...base,
      type: "eip1559",
      maxFeePerGas: BigInt(tx.maxFeePerGas ?? "0x0"),
      maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas ?? "0x0"),
      accessList,
    };
  } else if (tx.type === "0x1") {
    unsigned = { ...base, type: "eip2930", gasPrice: BigInt(tx.gasPrice ?? "0x0"), accessList };
  } else if (tx.type === "0x0") {
    unsigned = { ...base, type: "legacy", gasPrice: BigInt(tx.gasPrice ?? "0x0") };
  } else return undefined;
  const signature =
    tx.type === "0x0"
      ? { r: tx.r, s: tx.s, v: BigInt(tx.v) }
      : { r: tx.r, s: tx.s, yParity: Number(tx.yParity ?? "0x0") };
  const raw = serializeTransaction(unsigned, signature);
  return keccak256(raw) === tx.hash ? raw : undefined;
}

/**
 * With automine, a transaction whose nonce is next is mined at once. Under a burst of concurrent
 * sends anvil's pool can get that wrong in two ways, and every later nonce of the sender then waits
 * forever: a ready transaction sits in `pending` with no block for it, or the sender's next nonce
 * sits in `queued` (never promoted after the transaction before it was mined). A real chain's next
 * block would take it; on the embedded chain the watchdog does that: after two checks (2 s apart)
 * that see the same stall, it mines a block, or takes the stuck sender's transactions out of the
 * pool and sends the very same bytes again in nonce order (same hashes, so no record changes).
 * A node whose automine was turned off on purpose is left alone.
 */
export function startAutomineWatchdog(options: AutomineWatchdogOptions): () => void {
  const { url, logger } = options;
  let seen: string | undefined;
  const check = async () => {
    try {
      const stall = await readStall(url);
      if (stall === undefined) {
        seen = undefined;
        return;
      }
      // The same stall twice in a row, with no block in between: not a promotion still under way.
      const signature = `${stall.head}|${stall.ready}|${stall.stalled.join(",")}`;
      if (seen !== signature) {
        seen = signature;
        return;
      }
      seen = undefined;
      for (const sender of stall.stalled) await resend(url, logger, sender, stall.pool);
      if (stall.ready > 0) {
        logger.warn({ url, ready: stall.ready }, "anvil left ready transactions unmined; mining a block");
        await call(url, "evm_mine");
      }
    } catch {
      // The node is down or restarting: its supervisor deals with that; check again next time.
      seen = undefined;
    }
  };
  const everyMs = options.intervalMs ?? 2_000;
  const loop = new BackgroundLoop({
    name: "automine watchdog",
    everyMs,
    firstAfterMs: everyMs,
    pass: check,
    logger,
    unref: true,
  });
  loop.start();
  return () => void loop.stop();
}

interface Stall {
  head: string;
  /** Transactions ready to mine that no block took. */
  ready: number;
  pool: { pending: Pool; queued: Pool };
  /** Senders whose next nonce waits in the queued pool. */
  stalled: string[];
}

/** What an automining anvil left behind now, or undefined when nothing is stuck (or it does not automine). */
async function readStall(url: string): Promise<Stall | undefined> {
  if ((await call(url, "anvil_getAutomine")) !== true) return undefined;
  const status = await call(url, "txpool_status");
  const ready = Number(fieldOf(status, "pending") ?? "0x0");
  if (ready === 0 && Number(fieldOf(status, "queued") ?? "0x0") === 0) return undefined;
  const head = String(await call(url, "eth_blockNumber"));
  const content = await call(url, "txpool_content");
  const pending = fieldOf(content, "pending") ?? {};
  const queued = fieldOf(content, "queued") ?? {};
  if (!isPool(pending) || !isPool(queued)) return undefined;
  const stalled = await stalledSenders(url, queued);
  if (ready === 0 && stalled.length === 0) return undefined;
  return { head, ready, pool: { pending, queued }, stalled };
}

async function stalledSenders(url: string, queued: Pool): Promise<string[]> {
  const stalled: string[] = [];
  for (const [sender, byNonce] of Object.entries(queued)) {
    const next = Number(BigInt(String(await call(url, "eth_getTransactionCount", [sender, "latest"]))));
    if (byNonce[String(next)] !== undefined) stalled.push(sender);
  }
  return stalled;
}

/** A stalled sender's pool taken out and sent again in nonce order: anvil promotes it then. */
async function resend(url: string, logger: Logger, sender: string, pool: { pending: Pool; queued: Pool }) {
  const all = { ...(pool.pending[sender] ?? {}), ...(pool.queued[sender] ?? {}) };
  const ordered = Object.values(all).sort((a, b) => Number(a.nonce) - Number(b.nonce));
  const raws = ordered.map(rawOf);
  if (raws.some((raw) => raw === undefined)) return; // a type we cannot rebuild: leave it be
  await call(url, "anvil_removePoolTransactions", [sender]);
  for (const raw of raws) await call(url, "eth_sendRawTransaction", [raw]).catch(() => undefined);
  logger.warn(
    { url, sender, transactions: raws.length },
    "anvil left a sender's next nonce unpromoted; resent its pool",
  );
}
