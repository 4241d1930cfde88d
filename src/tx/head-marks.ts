/** The tracker's memory of what a node answered at which head, per chain: asked again only at another head (decisions 187 and 203). */
import type { Chain } from "../upstream/chain-registry.js";

/**
 * Per chain and key (a transaction hash, a block's `number:hash`), the head at which the node last
 * answered a given way. With no fresh head nothing is marked, so everything is asked. The keys
 * are cut to those still followed (each walk over the sent rows, each pass's mined blocks), so the
 * memory is bounded by the rows the tracker follows.
 */
export class HeadMarks {
  private readonly byChain = new Map<number, Map<string, number>>();

  /** Whether `key` was marked at `head`, the chain's fresh head (never when there is none). */
  at(chain: Chain, key: string, head: number | undefined): boolean {
    return head !== undefined && this.byChain.get(chain.chainId)?.get(key) === head;
  }

  /** Marks `key` at `head`; with no fresh head, clears it. */
  mark(chain: Chain, key: string, head: number | undefined): void {
    if (head === undefined) this.clear(chain, key);
    else this.of(chain).set(key, head);
  }

  clear(chain: Chain, key: string): void {
    this.byChain.get(chain.chainId)?.delete(key);
  }

  /** Drops every mark but those of `keys` (what this pass follows). */
  keepOnly(chain: Chain, keys: Iterable<string>): void {
    const marks = this.byChain.get(chain.chainId);
    if (marks === undefined || marks.size === 0) return;
    const kept = new Map<string, number>();
    for (const key of keys) {
      const head = marks.get(key);
      if (head !== undefined) kept.set(key, head);
    }
    this.byChain.set(chain.chainId, kept);
  }

  private of(chain: Chain): Map<string, number> {
    let marks = this.byChain.get(chain.chainId);
    if (marks === undefined) {
      marks = new Map();
      this.byChain.set(chain.chainId, marks);
    }
    return marks;
  }
}
