/** Signers opened by recent requests, so the tracker can bump a stuck transaction without the password. */
import type { LocalAccount } from "viem";

export class SignerRegistry {
  private readonly signers = new Map<string, { account: LocalAccount; expiresAt: number }>();

  /** Kept as long as the unlock cache keeps the key: no longer than a password would be remembered. */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  remember(address: string, account: LocalAccount): void {
    if (this.ttlMs <= 0) return;
    this.signers.set(address.toLowerCase(), { account, expiresAt: this.now() + this.ttlMs });
  }

  get(address: string): LocalAccount | undefined {
    const entry = this.signers.get(address.toLowerCase());
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.signers.delete(address.toLowerCase());
      return undefined;
    }
    return entry.account;
  }

  prune(): void {
    const now = this.now();
    for (const [key, entry] of this.signers) if (entry.expiresAt <= now) this.signers.delete(key);
  }
}
