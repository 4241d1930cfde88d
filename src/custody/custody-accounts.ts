/** A tenant's custody addresses as signing accounts: listed, unlocked for a while, or unattended. */
import { bytesToHex, getAddress, type LocalAccount } from "viem";
import { badRequest } from "../errors/chaingate-error.js";
import { signingAccount } from "../keys/signing-account.js";
import type { Store } from "../store/database.js";
import type { WalletService } from "../wallets/wallet-service.js";
import type { ClusterUnlocks } from "./cluster-unlocks.js";
import {
  accountLocked,
  noServerKey,
  sealKeyMismatch,
  unattendedUnavailable,
  unknownAccount,
  unlockedElsewhere,
} from "./custody-errors.js";
import type { SealKey } from "./seal-key.js";

export interface CustodyAccountsOptions {
  store: Store;
  wallets: WalletService;
  unlocked: ClusterUnlocks;
  /** Absent: no wallet can be made unattended, and none already sealed can sign. */
  sealKey: SealKey | undefined;
  unlockSeconds: number;
  unlockMaxSeconds: number;
  now?: () => number;
}

/** One custody address as the console and GET /accounts show it. */
export interface AccountStatus {
  address: string;
  wallet_id: string;
  index: number;
  /** Epoch milliseconds the unlock ends, or null. */
  unlocked_until: number | null;
  unattended: boolean;
}

interface Found {
  walletId: string;
  index: number;
  address: string;
  sealed: string | null;
  keyId: string | null;
  /** A PKCS11 address's signer: its key stays on the token (no unlock, no seal). */
  token: LocalAccount | undefined;
}

const sealContext = (walletId: string, index: number, address: string) =>
  `chaingate unattended\n${walletId}\n${index}\n${address.toLowerCase()}`;

export class CustodyAccounts {
  private readonly now: () => number;
  /** Unattended signers opened by this process, by address and the exact sealed record they came from. */
  private readonly opened = new Map<string, { sealed: string; account: LocalAccount }>();

  constructor(private readonly options: CustodyAccountsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The tenant's custody addresses with their unattended seal (if any); every owner without keys. */
  private owned(owner: string | null) {
    return this.options.store.db
      .selectFrom("wallet_addresses")
      .innerJoin("wallets", "wallets.id", "wallet_addresses.wallet_id")
      .leftJoin("unattended_keys", (join) =>
        join
          .onRef("unattended_keys.wallet_id", "=", "wallet_addresses.wallet_id")
          .onRef("unattended_keys.idx", "=", "wallet_addresses.idx"),
      )
      .select([
        "wallet_addresses.wallet_id",
        "wallet_addresses.idx",
        "wallet_addresses.address",
        "wallet_addresses.public_key",
        "wallet_addresses.keystore",
        "unattended_keys.sealed",
        "unattended_keys.key_id",
      ])
      .$if(owner !== null, (q) => q.where("wallets.owner", "=", owner));
  }

  /** The same rows in eth_accounts' documented order: wallets oldest first, then by address index. */
  private inOrder(owner: string | null) {
    return this.owned(owner)
      .orderBy("wallets.created_at")
      .orderBy("wallet_addresses.wallet_id")
      .orderBy("wallet_addresses.idx")
      .execute();
  }

  /** The tenant's custody addresses, checksummed, in eth_accounts' order. */
  async addresses(owner: string | null): Promise<string[]> {
    return (await this.inOrder(owner)).map((r) => getAddress(r.address));
  }

  async statuses(owner: string | null): Promise<AccountStatus[]> {
    return Promise.all(
      (await this.inOrder(owner)).map(async (r) => ({
        address: getAddress(r.address),
        wallet_id: r.wallet_id,
        index: r.idx,
        unlocked_until: (await this.options.unlocked.get(owner, r.address))?.until ?? null,
        unattended: r.key_id !== null,
      })),
    );
  }

  /** The tenant's address, or undefined when it is not theirs (another tenant's looks the same). */
  private async find(owner: string | null, address: string): Promise<Found | undefined> {
    const row = await this.owned(owner)
      .where("wallet_addresses.address", "=", getAddress(address))
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      walletId: row.wallet_id,
      index: row.idx,
      address: row.address,
      sealed: row.sealed ?? null,
      keyId: row.key_id ?? null,
      token: this.options.wallets.tokenAccount(row.address, row.public_key, row.keystore),
    };
  }

  /**
   * Where an unlock made here lets chaingate sign: on every instance sharing the store (a server key
   * seals it there, or there is one instance), or on this instance only (several instances, no
   * server key).
   */
  get unlockScope(): "every_instance" | "this_instance" {
    const { store, unlocked } = this.options;
    return !store.bus.shared || unlocked.sharedAcrossInstances ? "every_instance" : "this_instance";
  }

  /** The wallet and index of the tenant's address, locked or not; undefined when it is not theirs. */
  async holder(
    owner: string | null,
    address: string,
  ): Promise<{ walletId: string; index: number } | undefined> {
    const found = await this.find(owner, address);
    return found ? { walletId: found.walletId, index: found.index } : undefined;
  }

  /** Whether the tenant holds this address (so a caller can decide to forward to a node instead). */
  async owns(owner: string | null, address: string): Promise<boolean> {
    return (await this.find(owner, address)) !== undefined;
  }

  /** The signer for one of the tenant's addresses: unlocked, or unattended; otherwise "locked". */
  async signer(
    owner: string | null,
    address: string,
  ): Promise<{ account: LocalAccount; walletId: string; index: number }> {
    const found = await this.find(owner, address);
    if (!found) throw unknownAccount();
    if (found.token) return { account: found.token, walletId: found.walletId, index: found.index };
    const unlocked = await this.options.unlocked.get(owner, found.address);
    if (unlocked) return { account: unlocked.account, walletId: found.walletId, index: found.index };
    const account = this.openUnattended(found);
    if (!account) {
      const why = await this.options.unlocked.whyNotHere(owner, found.address);
      throw why === undefined ? accountLocked(found.address) : unlockedElsewhere(found.address, why);
    }
    return { account, walletId: found.walletId, index: found.index };
  }

  /**
   * The signer for one call made with the address's password (geth's `personal_sign` third
   * parameter): the password is checked and counted as an unlock's, and nothing stays unlocked.
   */
  async signerWithPassword(
    owner: string | null,
    address: string,
    password: string,
  ): Promise<{ account: LocalAccount; walletId: string; index: number }> {
    if (password.length === 0) throw badRequest("PASSWORD_REQUIRED", "the password parameter is empty");
    const found = await this.find(owner, address);
    if (!found) throw unknownAccount();
    const unlocked = await this.options.wallets.unlock(found.walletId, found.index, password, owner);
    return { account: unlocked.account, walletId: found.walletId, index: found.index };
  }

  /** For the tracker's fee bumps: an unattended address's signer, whoever owns it. */
  async unattendedSigner(address: string): Promise<LocalAccount | undefined> {
    const found = await this.find(null, address);
    return found ? (found.token ?? this.openUnattended(found)) : undefined;
  }

  private openUnattended(found: Found): LocalAccount | undefined {
    if (found.sealed === null) return undefined;
    const key = this.options.sealKey;
    if (!key) throw noServerKey(found.address);
    if (key.id !== found.keyId) throw sealKeyMismatch(found.address);
    const cached = this.opened.get(found.address);
    if (cached?.sealed === found.sealed) return cached.account;
    const secret = key.open(found.sealed, sealContext(found.walletId, found.index, found.address));
    const account = signingAccount(bytesToHex(secret));
    secret.fill(0);
    this.opened.set(found.address, { sealed: found.sealed, account });
    return account;
  }

  /**
   * personal_unlockAccount: checks the password (counted in the wallet's lockout, like every unlock),
   * then keeps the signer in memory for `seconds` (default and ceiling from config). Returns the end.
   */
  async unlock(owner: string | null, address: string, password: string, seconds?: number): Promise<number> {
    if (typeof password !== "string" || password.length === 0) {
      throw badRequest("PASSWORD_REQUIRED", "a password is required to unlock an address");
    }
    const found = await this.find(owner, address);
    if (!found) throw unknownAccount();
    // A PKCS11 address signs with no unlock: the call succeeds (clients unlock before they send) and holds nothing.
    if (found.token)
      return (
        this.now() + Math.min(seconds || this.options.unlockSeconds, this.options.unlockMaxSeconds) * 1000
      );
    const { unlocked, privateKey } = await this.options.wallets.unlockKey(
      found.walletId,
      found.index,
      password,
      owner,
    );
    const { unlockSeconds, unlockMaxSeconds } = this.options;
    const granted = Math.min(
      seconds === undefined || seconds === 0 ? unlockSeconds : seconds,
      unlockMaxSeconds,
    );
    const until = this.now() + granted * 1000;
    try {
      await this.options.unlocked.set(
        owner,
        found.address,
        { account: unlocked.account, walletId: found.walletId, index: found.index, until },
        privateKey,
      );
    } finally {
      privateKey.fill(0);
    }
    return until;
  }

  /** personal_lockAccount: ends the unlock at once (an unattended address stays unattended). */
  async lock(owner: string | null, address: string): Promise<void> {
    const found = await this.find(owner, address);
    if (!found) throw unknownAccount();
    await this.options.unlocked.delete(owner, found.address);
  }

  /**
   * Seals every address key of the wallet under the server key, so chaingate signs for it with no
   * unlock, on every instance and after restarts. The password is checked as for an unlock.
   */
  async makeUnattended(
    walletId: string,
    password: string,
    owner: string | null,
    /** The admin key asking (null in keyless mode): its wrong passwords never lock the wallet's owner out. */
    admin: string | null = null,
  ): Promise<string[]> {
    const key = this.options.sealKey;
    if (!key) throw unattendedUnavailable();
    if (typeof password !== "string" || password.length === 0) {
      throw badRequest("PASSWORD_REQUIRED", "the wallet's password is required to make it unattended");
    }
    const keys = await this.options.wallets.openKeys(walletId, password, owner, admin);
    const now = this.now();
    const rows = keys.map((k) => ({
      wallet_id: walletId,
      idx: k.index,
      address: k.address,
      sealed: key.seal(k.privateKey, sealContext(walletId, k.index, k.address)),
      key_id: key.id,
      created_at: now,
    }));
    for (const k of keys) k.privateKey.fill(0);
    await this.options.store.db.transaction().execute(async (trx) => {
      await trx.deleteFrom("unattended_keys").where("wallet_id", "=", walletId).execute();
      await trx.insertInto("unattended_keys").values(rows).execute();
    });
    return rows.map((r) => getAddress(r.address));
  }

  /** Back to attended: the sealed keys are deleted; unlocks already granted run their course. */
  async removeUnattended(walletId: string, owner: string | null): Promise<void> {
    await this.options.wallets.get(walletId, undefined, owner);
    const removed = await this.options.store.db
      .deleteFrom("unattended_keys")
      .where("wallet_id", "=", walletId)
      .returning("address")
      .execute();
    for (const r of removed) this.opened.delete(r.address);
  }
}
