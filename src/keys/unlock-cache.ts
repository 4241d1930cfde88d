/** Remembers derived keys briefly after a correct password, so repeated signing skips scrypt. */
import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { LocalAccount } from "viem";

/** A signer opened with a cached key, with what the store said of its wallet (immutable: owner, address). */
export interface OpenedAccount {
  account: LocalAccount;
  address: string;
  owner: string | null;
}

interface Entry {
  passwordTag: Buffer;
  derivedKey: Buffer;
  expiresAt: number;
  /** Signers already opened with this key, by address index (saves reading and decrypting on every request). */
  accounts: Map<number, OpenedAccount>;
}

export class UnlockCache {
  /** Per-process secret, as text (see tag): the tags below are useless outside this process. */
  private readonly secret = randomBytes(32).toString("hex");
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * SHA-256 of the secret, the wallet and the password, NUL apart (a wallet id holds no NUL), in one
   * call: every signature with a cached key checks its password here, and an HMAC object (a stream
   * with a key imported each time) cost 4.1 µs a call alone against 2.1 for the one-shot hash: 1.5%
   * of the event loop's CPU in a burst, 0.3% now (decision 243). Nothing outside this process sees a
   * tag or the secret, so the keyed hash needs none of HMAC's shape: it only has to be equal for
   * equal inputs and unguessable without the secret.
   */
  private tag(walletId: string, password: string): Buffer {
    return hash("sha256", `${this.secret}\0${walletId}\0${password}`, "buffer");
  }

  /** A process-local tag of (wallet, password): equal for equal passwords, useless outside this process. */
  tagOf(walletId: string, password: string): string {
    return this.tag(walletId, password).toString("hex");
  }

  private entry(walletId: string, password: string): Entry | undefined {
    const entry = this.entries.get(walletId);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(walletId);
      return undefined;
    }
    return timingSafeEqual(entry.passwordTag, this.tag(walletId, password)) ? entry : undefined;
  }

  get(walletId: string, password: string): Buffer | undefined {
    return this.entry(walletId, password)?.derivedKey;
  }

  /** The signer for one address, when the password matches a live entry that has opened it before. */
  account(walletId: string, password: string, index: number): OpenedAccount | undefined {
    return this.entry(walletId, password)?.accounts.get(index);
  }

  rememberAccount(walletId: string, password: string, index: number, opened: OpenedAccount): void {
    this.entry(walletId, password)?.accounts.set(index, opened);
  }

  set(walletId: string, password: string, derivedKey: Buffer): void {
    if (this.ttlMs <= 0) return;
    this.delete(walletId);
    this.entries.set(walletId, {
      passwordTag: this.tag(walletId, password),
      derivedKey: Buffer.from(derivedKey),
      expiresAt: this.now() + this.ttlMs,
      accounts: new Map(),
    });
  }

  delete(walletId: string): void {
    const entry = this.entries.get(walletId);
    if (entry) {
      entry.derivedKey.fill(0);
      entry.accounts.clear();
    }
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
