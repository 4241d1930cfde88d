/** Addresses unlocked by personal_unlockAccount: per tenant, in memory only, each until its time. */
import type { LocalAccount } from "viem";

export interface Unlocked {
  account: LocalAccount;
  walletId: string;
  index: number;
  until: number;
}

const keyOf = (owner: string | null, address: string) => `${owner ?? ""}\n${address.toLowerCase()}`;

export class UnlockedAccounts {
  private readonly entries = new Map<string, Unlocked>();

  constructor(private readonly now: () => number = Date.now) {}

  set(owner: string | null, address: string, entry: Unlocked): void {
    this.entries.set(keyOf(owner, address), entry);
  }

  /** The live unlock of this tenant's address; an expired one is dropped here. */
  get(owner: string | null, address: string): Unlocked | undefined {
    const key = keyOf(owner, address);
    const entry = this.entries.get(key);
    if (entry && entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  delete(owner: string | null, address: string): boolean {
    return this.entries.delete(keyOf(owner, address));
  }

  /** Expired entries go (run periodically, so an idle tenant's unlocks do not stay in memory). */
  prune(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
