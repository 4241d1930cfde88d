/** Follows every signed transaction to its receipt and confirmations: one pass runs the jobs (reconcile, rebroadcast, follow, drop watch, confirm) on each chain. */
import { BackgroundLoop } from "../lifecycle/background-loop.js";
import type { TransactionsTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { broadcast } from "./track-broadcast.js";
import { confirm } from "./track-confirm.js";
import { followDropped, recentDrops } from "./track-dropped.js";
import { followSent } from "./track-follow.js";
import { reconcile } from "./track-reconcile.js";
import { TrackerContext, type TrackerOptions } from "./tracker-context.js";
import { heldByPipeline } from "./transaction-states.js";

export type { TrackerOptions } from "./tracker-context.js";

export class TransactionTracker {
  private readonly loop: BackgroundLoop;
  private readonly ctx: TrackerContext;
  /** Chains to check against the chain again on the next pass (all of them at start). */
  private readonly toReconcile = new Set<number>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(options: TrackerOptions) {
    this.ctx = new TrackerContext(options);
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

  /**
   * One pass over every chain; exposed so tests and shutdown can drive it. Each reads a page of a
   * chain's queued and of its sent rows, from where the last one ended (TrackerContext.page).
   */
  async tick(): Promise<void> {
    await this.ctx.options.pipeline.settleDeferred();
    await Promise.all(this.ctx.options.chains.all().map((chain) => this.tickChain(chain)));
  }

  private async tickChain(chain: Chain): Promise<void> {
    const ctx = this.ctx;
    if (this.toReconcile.delete(chain.chainId)) {
      try {
        await reconcile(ctx, chain);
      } catch (error) {
        this.toReconcile.add(chain.chainId);
        throw error;
      }
    }
    const queued = await ctx.page(chain, "queued");
    const queuedBefore = ctx.moves(chain);
    const now = ctx.now();
    for (const row of queued.rows) {
      // A row queued since this tracker started may belong to a pipeline that is broadcasting it
      // right now: sending it too could get "nonce too low" back there and a second transaction
      // signed. Rows from before the start (a crash) go at once; later ones after a grace time.
      if (heldByPipeline(row, ctx.startedAt, now)) continue;
      await broadcast(ctx, chain, row);
    }
    if (ctx.moves(chain) > queuedBefore) ctx.restartWalk(chain, "queued");
    const sent = await ctx.page(chain, "sent");
    const dropped = await recentDrops(ctx, chain);
    const followedBefore = ctx.moves(chain);
    const lowest = lowestOfEachAddress(sent.rows);
    await Promise.all(sent.rows.map((row) => followSent(ctx, chain, row, lowest.has(row))));
    ctx.heldChecked.keepOnly(
      chain,
      [...lowest].map((row) => row.tx_hash),
    );
    const moved = ctx.moves(chain) > followedBefore;
    if (moved) ctx.restartWalk(chain, "sent");
    ctx.followedAll(chain, sent, dropped, moved || !sent.more);
    await followDropped(ctx, chain, dropped);
    await confirm(ctx, chain);
  }
}

/** Each address's first row of a page in (nonce, id) order: its lowest open nonce there. */
function lowestOfEachAddress(rows: readonly TransactionsTable[]): Set<TransactionsTable> {
  const seen = new Set<string>();
  const lowest = new Set<TransactionsTable>();
  for (const row of rows) {
    const address = row.from_address.toLowerCase();
    if (seen.has(address)) continue;
    seen.add(address);
    lowest.add(row);
  }
  return lowest;
}
