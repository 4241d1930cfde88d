/** Remembers derived keys briefly after a correct password, so repeated signing skips scrypt. */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

interface Entry {
  passwordTag: Buffer;
  derivedKey: Buffer;
  expiresAt: number;
}

export class UnlockCache {
  /** Per-process secret: the tags below are useless outside this process. */
  private readonly secret = randomBytes(32);
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private tag(walletId: string, password: string): Buffer {
    return createHmac("sha256", this.secret).update(walletId).update("\0").update(password).digest();
  }

  get(walletId: string, password: string): Buffer | undefined {
    const entry = this.entries.get(walletId);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(walletId);
      return undefined;
    }
    return timingSafeEqual(entry.passwordTag, this.tag(walletId, password)) ? entry.derivedKey : undefined;
  }

  set(walletId: string, password: string, derivedKey: Buffer): void {
    if (this.ttlMs <= 0) return;
    this.delete(walletId);
    this.entries.set(walletId, {
      passwordTag: this.tag(walletId, password),
      derivedKey: Buffer.from(derivedKey),
      expiresAt: this.now() + this.ttlMs,
    });
  }

  delete(walletId: string): void {
    const entry = this.entries.get(walletId);
    if (entry) entry.derivedKey.fill(0);
    this.entries.delete(walletId);
  }

  /** Drops expired entries (run periodically so memory does not grow with idle wallets). */
  prune(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.delete(id);
  }

  clear(): void {
    for (const id of [...this.entries.keys()]) this.delete(id);
  }
}
