/** A wallet's password allowance: attempts counted in the store (on every instance), the lock past the free ones. */
import type { Store } from "../store/database.js";
import { walletLocked, walletNotFound } from "./wallet-errors.js";

/** Wrong passwords allowed before the wallet starts locking; then 1 s, 2 s, 4 s ... up to 5 minutes. */
const FREE_ATTEMPTS = 5;
const MAX_LOCK_MS = 5 * 60_000;

export class PasswordAttempts {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  /**
   * Takes one attempt from the wallet's allowance in one database transaction (the row locked on
   * PostgreSQL; SQLite serialises writers): refused while the wallet is locked; the attempt that
   * passes the free ones sets the lock for every later one.
   */
  async reserve(walletId: string): Promise<void> {
    const now = this.now();
    const lockedUntil = await this.store.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom("wallets")
        .select(["failed_attempts", "locked_until"])
        .where("id", "=", walletId)
        .$if(this.store.kind === "postgres", (q) => q.forUpdate())
        .executeTakeFirst();
      if (!current) throw walletNotFound(walletId);
      if (current.locked_until > now) return current.locked_until;
      const attempts = current.failed_attempts + 1;
      const lockMs = lockFor(attempts);
      await trx
        .updateTable("wallets")
        .set({ failed_attempts: attempts, locked_until: lockMs > 0 ? now + lockMs : 0 })
        .where("id", "=", walletId)
        .execute();
      return lockMs > 0 ? -1 : undefined;
    });
    // This attempt is the one that locks the wallet (past the free ones).
    if (lockedUntil === -1) return this.endUnlocks(walletId);
    if (lockedUntil !== undefined) throw walletLocked(Math.ceil((lockedUntil - now) / 1000));
  }

  /**
   * The wallet's password is being guessed: every unlock of its addresses ends, on every instance
   * (whoever guesses may have watched the owner type it).
   */
  private async endUnlocks(walletId: string): Promise<void> {
    await this.store.db.deleteFrom("unlocks").where("wallet_id", "=", walletId).execute();
    await this.store.bus.publish({ kind: "wallet-lock", walletId });
  }

  /** As reserveAttempt, on an allowance of its own (an admin key on a wallet it does not own). */
  async reserveScoped(scope: string): Promise<void> {
    const now = this.now();
    const lockedUntil = await this.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("attempt_limits")
        .values({ scope, failed_attempts: 0, locked_until: 0 })
        .onConflict((oc) => oc.column("scope").doNothing())
        .execute();
      const current = await trx
        .selectFrom("attempt_limits")
        .select(["failed_attempts", "locked_until"])
        .where("scope", "=", scope)
        .$if(this.store.kind === "postgres", (q) => q.forUpdate())
        .executeTakeFirstOrThrow();
      if (current.locked_until > now) return current.locked_until;
      const attempts = current.failed_attempts + 1;
      await trx
        .updateTable("attempt_limits")
        .set({ failed_attempts: attempts, locked_until: now + lockFor(attempts) })
        .where("scope", "=", scope)
        .execute();
      return undefined;
    });
    if (lockedUntil !== undefined) throw walletLocked(Math.ceil((lockedUntil - now) / 1000));
  }

  /** A right password: the wallet's count starts again. */
  async clear(walletId: string): Promise<void> {
    await this.store.db
      .updateTable("wallets")
      .set({ failed_attempts: 0, locked_until: 0 })
      .where("id", "=", walletId)
      .execute();
  }

  async clearScoped(scope: string): Promise<void> {
    await this.store.db.deleteFrom("attempt_limits").where("scope", "=", scope).execute();
  }
}

/** The lock an attempt sets: none for the free ones, then 1 s doubling up to the most. */
function lockFor(attempts: number): number {
  return attempts > FREE_ATTEMPTS ? Math.min(1000 * 2 ** (attempts - FREE_ATTEMPTS - 1), MAX_LOCK_MS) : 0;
}
