/** Whether a node holds an address's next transaction in its queue of not-yet-executable ones, where it will never mine it (decision 245). */
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, nodeReadOn } from "../upstream/node-reads.js";
import type { TrackerContext } from "./tracker-context.js";

/**
 * How long a sent transaction waits unmined before the check: longer than a node takes to move a
 * transaction whose predecessor was just mined from its queue to its pending part.
 */
export const HELD_AFTER_MS = 3_000;

/**
 * A sent transaction the node has not mined is checked, once per head, when it is the lowest open
 * nonce of its address in the page (`lowest`) and older than HELD_AFTER_MS: held back when its nonce
 * is the account's next by the chain (`latest`), the node does not count it as pending, and a
 * ready upstream lists it in its pool's queued part. Every condition is one a correct node never
 * shows for a transaction it can mine; anvil's pool shows all three under load, for good (a
 * transaction checked against the account's nonce before its predecessor was mined and added to
 * the pool after, waiting on a predecessor that no longer comes). The
 * pool's listing is asked last and only then, as it may be large; an upstream that does not answer
 * `txpool_inspect` (a hosted node) leaves the transaction to the later checks
 * (`--resend-after-seconds`).
 */
export async function heldInQueue(
  ctx: TrackerContext,
  chain: Chain,
  row: TransactionsTable,
  lowest: boolean,
  age: number,
): Promise<boolean> {
  if (!lowest || age < HELD_AFTER_MS) return false;
  const head = chain.head?.head;
  if (ctx.heldChecked.at(chain, row.tx_hash, head)) return false;
  ctx.heldChecked.mark(chain, row.tx_hash, head);
  // Batched with the pass's other reads (its receipts): one HTTP request for every address checked.
  const count = (block: string) =>
    nodeRead(chain, "eth_getTransactionCount", [row.from_address, block], { batch: true }).then((n) =>
      Number(BigInt(n)),
    );
  const [latest, pending] = await Promise.all([count("latest"), count("pending")]).catch(() => [
    undefined,
    undefined,
  ]);
  if (latest !== row.nonce || pending !== row.nonce) return false;
  const listed = await Promise.all(
    chain.pool.readyLabels().map((label) =>
      nodeReadOn(chain, label, "txpool_inspect", []).then(
        (pool) => queuedAt(pool.queued, row.from_address, row.nonce),
        () => false,
      ),
    ),
  );
  return listed.includes(true);
}

/** Whether `queued` (by sender as the node spells it, then by nonce) holds `address`'s `nonce`. */
function queuedAt(queued: Record<string, Record<string, unknown>>, address: string, nonce: number): boolean {
  const wanted = address.toLowerCase();
  for (const [sender, byNonce] of Object.entries(queued))
    if (sender.toLowerCase() === wanted && byNonce[String(nonce)] !== undefined) return true;
  return false;
}
