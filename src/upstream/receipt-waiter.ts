/** Waits for receipts on one chain: every waiting hash is looked up once per new head, in one batch, not polled per request. */
import type { Hex } from "viem";
import type { Chain } from "./chain-registry.js";
import { type NodeReceipt, receiptOf } from "./node-reads.js";

export type { NodeReceipt } from "./node-reads.js";

interface Waiter {
  resolve: (receipt: NodeReceipt | null) => void;
  timer: NodeJS.Timeout;
}

const byPool = new WeakMap<Chain["pool"], ReceiptWaiter>();

/** The chain's one waiter (made on first use), so all waits on a chain share each head's lookups. */
export function receiptWaiterOf(chain: Chain): ReceiptWaiter {
  let waiter = byPool.get(chain.pool);
  if (!waiter) {
    waiter = new ReceiptWaiter(chain);
    byPool.set(chain.pool, waiter);
  }
  return waiter;
}

export class ReceiptWaiter {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private stopFollowing: (() => void) | undefined;
  private looking: Promise<void> | undefined;
  private lookAgain = false;

  /** Without a head tracker (hand-built chains), the hashes are looked up every `fallbackMs` instead. */
  constructor(
    private readonly chain: Chain,
    private readonly fallbackMs = 250,
  ) {}

  /** Hashes being waited for now (metrics, tests). */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * The receipt once a node has it, or null when `timeoutMs` passes first (the transaction may still
   * be mined later). The wait is registered before the first lookup, so a block that lands between
   * the two is not missed.
   */
  wait(hash: Hex, timeoutMs: number): Promise<NodeReceipt | null> {
    const key = hash.toLowerCase();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.remove(key, waiter);
          resolve(null);
        }, timeoutMs),
      };
      let set = this.waiting.get(key);
      if (!set) {
        set = new Set();
        this.waiting.set(key, set);
      }
      set.add(waiter);
      this.follow();
      this.lookNow();
    });
  }

  private remove(key: string, waiter: Waiter): void {
    const set = this.waiting.get(key);
    if (!set) return;
    set.delete(waiter);
    if (set.size === 0) this.waiting.delete(key);
    if (this.waiting.size === 0) this.unfollow();
  }

  /** New heads drive the lookups while anything waits. */
  private follow(): void {
    if (this.stopFollowing) return;
    const head = this.chain.head;
    if (head) {
      this.stopFollowing = head.onHead(() => this.lookNow());
      return;
    }
    const timer = setInterval(() => this.lookNow(), this.fallbackMs);
    timer.unref();
    this.stopFollowing = () => clearInterval(timer);
  }

  private unfollow(): void {
    this.stopFollowing?.();
    this.stopFollowing = undefined;
  }

  /** One lookup of every waiting hash at a time; a head that arrives during one asks for another after it. */
  private lookNow(): void {
    if (this.looking) {
      this.lookAgain = true;
      return;
    }
    this.looking = (async () => {
      do {
        this.lookAgain = false;
        await this.lookAll();
      } while (this.lookAgain && this.waiting.size > 0);
    })().finally(() => {
      this.looking = undefined;
    });
  }

  private async lookAll(): Promise<void> {
    const hashes = [...this.waiting.keys()];
    await Promise.all(
      hashes.map(async (hash) => {
        let receipt: NodeReceipt | null;
        try {
          receipt = await receiptOf(this.chain, hash, { batch: true });
        } catch {
          // No upstream answered this time: the next head asks again, the waiter's timeout bounds it.
          return;
        }
        if (receipt === null) return;
        this.chain.head?.observe(Number(BigInt(receipt.blockNumber)));
        const set = this.waiting.get(hash);
        if (!set) return;
        this.waiting.delete(hash);
        for (const waiter of set) {
          clearTimeout(waiter.timer);
          waiter.resolve(receipt);
        }
      }),
    );
    if (this.waiting.size === 0) this.unfollow();
  }
}
