/** Follows every signed transaction to its receipt and confirmations: one pass runs the jobs (reconcile, rebroadcast, follow, drop watch, confirm) on each chain. */
import { BackgroundLoop } from "../lifecycle/background-loop.js";
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
      // A new block's receipts are asked for when its head is seen, not up to a pause later.
      const woken = chain.head?.onHead(() => this.loop.wake());
      if (woken) this.unsubscribe.push(woken);
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
   * One pass over every chain; exposed so tests and shutdown can drive it. Where a chain's pass
   * read a full page and had work on it (queued rows sent, receipts asked for), the next pass
   * starts at once rather than after the pause: a burst's block, or a new head, is followed page
   * after page to the end, while a backlog already asked about at this head (stuck in the node's
   * pool) is walked a page a pause.
   */
  async tick(): Promise<void> {
    await this.ctx.options.pipeline.settleDeferred();
    const more = await Promise.all(this.ctx.options.chains.all().map((chain) => this.tickChain(chain)));
    if (more.includes(true)) this.loop.wake();
  }

  /** One chain's pass; answers whether it had work on a full page, with rows left past it. */
  private async tickChain(chain: Chain): Promise<boolean> {
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
    const now = ctx.now();
    let sentAgain = false;
    for (const row of queued.rows) {
      // A row queued since this tracker started may belong to a pipeline that is broadcasting it
      // right now: sending it too could get "nonce too low" back there and a second transaction
      // signed. Rows from before the start (a crash) go at once; later ones after a grace time.
      if (heldByPipeline(row, ctx.startedAt, now)) continue;
      if (await broadcast(ctx, chain, row)) sentAgain = true;
    }
    const sent = await ctx.page(chain, "sent");
    const dropped = await recentDrops(ctx, chain);
    ctx.followedAll(chain, sent, dropped);
    const followed = await Promise.all(sent.rows.map((row) => followSent(ctx, chain, row)));
    await followDropped(ctx, chain, dropped);
    await confirm(ctx, chain);
    return (queued.more && sentAgain) || (sent.more && followed.some((f) => f !== "unasked"));
  }
}
