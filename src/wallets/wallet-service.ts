/** Custody wallets: create or import, list, fetch, and unlock an address's key for signing. */
import { randomUUID } from "node:crypto";
import { bytesToHex, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { badRequest } from "../errors/chaingate-error.js";
import {
  accountFromPrivateKey,
  type DerivedAccount,
  deriveAccounts,
  mnemonicEntropy,
  newMnemonic,
  normalizeMnemonic,
} from "../keys/hd-wallet.js";
import { type KdfPreset, type KeyDeriver, newScryptParams, type ScryptParams } from "../keys/kdf.js";
import { parseKeystore, seal, toKeystore, unseal } from "../keys/keystore-v3.js";
import { signingAccount } from "../keys/signing-account.js";
import type { UnlockCache } from "../keys/unlock-cache.js";
import type { Store } from "../store/database.js";
import type { WalletAddressesTable, WalletsTable } from "../store/schema.js";
import { PasswordAttempts } from "./password-attempts.js";
import { addressNotFound, walletNotFound } from "./wallet-errors.js";

export interface WalletRecord {
  id: string;
  type: "KEYSTORE_V3";
  address: string;
  public_key: string;
  index: number;
  data: string;
}

export interface CreateWalletInput {
  type: string;
  password: string | null | undefined;
  addressQuantity: number;
  /** Import: an existing BIP-39 phrase instead of a new seed. */
  mnemonic?: string | undefined;
  /** Import: one existing keystore v3 document (string or object), decrypted with `password`. */
  keystore?: unknown;
}

export interface WalletServiceOptions {
  store: Store;
  deriver: KeyDeriver;
  cache: UnlockCache;
  kdf: KdfPreset;
  maxAddresses: number;
  /** Called with new addresses after they are stored (the devnet funds them). */
  onAddressesCreated?: (addresses: readonly string[]) => Promise<void>;
  now?: () => number;
}

export interface UnlockedAddress {
  walletId: string;
  index: number;
  address: string;
  account: LocalAccount;
}

export class WalletService {
  private readonly now: () => number;
  /** Unlocks under way, by wallet and password tag: concurrent ones with one password share one. */
  private readonly unlocking = new Map<string, Promise<Buffer>>();
  /** Wrong passwords are counted per wallet (or per admin scope), on every instance. */
  private readonly attempts: PasswordAttempts;

  constructor(private readonly options: WalletServiceOptions) {
    this.now = options.now ?? Date.now;
    this.attempts = new PasswordAttempts(options.store, this.now);
  }

  async create(input: CreateWalletInput, owner: string | null = null): Promise<WalletRecord[]> {
    if (input.type !== "KEYSTORE_V3") {
      throw badRequest("INVALID_WALLET_TYPE", `type must be KEYSTORE_V3, got ${JSON.stringify(input.type)}`);
    }
    const password = input.password;
    if (typeof password !== "string" || password.length === 0) {
      throw badRequest(
        "PASSWORD_REQUIRED",
        "password is required for KEYSTORE_V3 wallets and must not be empty",
      );
    }
    const quantity = input.addressQuantity;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > this.options.maxAddresses) {
      throw badRequest(
        "INVALID_ADDRESS_QUANTITY",
        `address_quantity must be an integer from 1 to ${this.options.maxAddresses}`,
      );
    }
    if (input.mnemonic !== undefined && input.keystore !== undefined) {
      throw badRequest("INVALID_IMPORT", "give either mnemonic or keystore, not both");
    }

    const kdf = newScryptParams(this.options.kdf);
    let source: WalletsTable["source"];
    let accounts: DerivedAccount[];
    let entropy: Uint8Array | undefined;
    if (input.keystore !== undefined) {
      if (quantity !== 1) {
        throw badRequest(
          "INVALID_ADDRESS_QUANTITY",
          "a keystore import holds one key: address_quantity must be 1",
        );
      }
      source = "keystore";
      accounts = [accountFromPrivateKey(0, await this.openForeignKeystore(input.keystore, password, owner))];
    } else {
      const mnemonic = input.mnemonic === undefined ? newMnemonic() : normalizeMnemonic(input.mnemonic);
      source = input.mnemonic === undefined ? "generated" : "mnemonic";
      entropy = mnemonicEntropy(mnemonic);
      accounts = await deriveAccounts(mnemonic, 0, quantity);
    }

    // One scrypt for the whole wallet: every keystore shares the salt and so the derived key.
    const derivedKey = await this.options.deriver.derive(password, kdf, owner ?? "");
    const id = randomUUID();
    const createdAt = this.now();
    const rows: WalletAddressesTable[] = accounts.map((account) => ({
      wallet_id: id,
      idx: account.index,
      address: account.address,
      public_key: account.publicKey,
      keystore: JSON.stringify(toKeystore(account.privateKey, account.address, derivedKey, kdf)),
      created_at: createdAt,
    }));
    for (const account of accounts) account.privateKey.fill(0);
    const sealedSeed = entropy ? JSON.stringify(seal(entropy, derivedKey)) : null;
    entropy?.fill(0);

    await this.options.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("wallets")
        .values({
          id,
          type: "KEYSTORE_V3",
          source,
          kdf: JSON.stringify(kdf),
          sealed_seed: sealedSeed,
          address_count: rows.length,
          failed_attempts: 0,
          locked_until: 0,
          owner,
          created_at: createdAt,
        })
        .execute();
      await trx.insertInto("wallet_addresses").values(rows).execute();
    });
    this.options.cache.set(id, password, derivedKey);
    derivedKey.fill(0);
    await this.options.onAddressesCreated?.(rows.map((r) => r.address));
    return rows.map(toRecord);
  }

  /** Decrypts an imported keystore with its own KDF; its password becomes the wallet's password. */
  private async openForeignKeystore(
    keystore: unknown,
    password: string,
    owner: string | null,
  ): Promise<Uint8Array> {
    const parsed = parseKeystore(keystore);
    const key = await this.options.deriver.derive(password, parsed.kdf, owner ?? "");
    const privateKey = unseal(parsed.sealed, key);
    key.fill(0);
    if (privateKey.length !== 32)
      throw badRequest("INVALID_KEYSTORE", "Invalid keystore: key is not 32 bytes");
    if (parsed.address !== undefined) {
      const actual = privateKeyToAccount(bytesToHex(privateKey)).address.toLowerCase().replace(/^0x/, "");
      if (actual !== parsed.address.toLowerCase().replace(/^0x/, "")) {
        throw badRequest("INVALID_KEYSTORE", "Invalid keystore: its address does not match its key");
      }
    }
    return privateKey;
  }

  async list(owner: string | null = null): Promise<WalletRecord[]> {
    const rows = await this.options.store.db
      .selectFrom("wallet_addresses")
      .innerJoin("wallets", "wallets.id", "wallet_addresses.wallet_id")
      .selectAll("wallet_addresses")
      .$if(owner !== null, (q) => q.where("wallets.owner", "=", owner))
      .orderBy("wallets.created_at")
      .orderBy("wallet_addresses.wallet_id")
      .orderBy("wallet_addresses.idx")
      .execute();
    return rows.map(toRecord);
  }

  async get(id: string, index?: number, owner: string | null = null): Promise<WalletRecord[]> {
    const wallet = await this.wallet(id, owner);
    const rows = await this.options.store.db
      .selectFrom("wallet_addresses")
      .selectAll()
      .where("wallet_id", "=", wallet.id)
      .$if(index !== undefined, (q) => q.where("idx", "=", index!))
      .orderBy("idx")
      .execute();
    if (index !== undefined && rows.length === 0) throw addressNotFound(id, index);
    return rows.map(toRecord);
  }

  private async wallet(id: string, owner: string | null): Promise<WalletsTable> {
    const wallet = await this.options.store.db
      .selectFrom("wallets")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    // Another tenant's wallet is indistinguishable from a missing one.
    if (!wallet || (owner !== null && wallet.owner !== owner)) throw walletNotFound(id);
    return wallet;
  }

  /** Returns a signer for the address at `index`; a correct password is remembered for a while. */
  async unlock(
    id: string,
    index: number,
    password: string,
    owner: string | null = null,
  ): Promise<UnlockedAddress> {
    // A signer opened before with this password needs neither the store nor a decryption: what it
    // was opened with (wallet owner, address, keystore) never changes once written.
    const opened = this.options.cache.account(id, password, index);
    if (opened) {
      // Another tenant's wallet is indistinguishable from a missing one.
      if (owner !== null && opened.owner !== owner) throw walletNotFound(id);
      return { walletId: id, index, address: opened.address, account: opened.account };
    }
    // The wallet and the address in one read; which one is missing is asked only when the pair is
    // not found.
    const found = await this.options.store.db
      .selectFrom("wallets as w")
      .innerJoin("wallet_addresses as a", "a.wallet_id", "w.id")
      .selectAll("w")
      .select(["a.address as address", "a.keystore as keystore"])
      .where("w.id", "=", id)
      .where("a.idx", "=", index)
      .executeTakeFirst();
    if (!found) {
      await this.wallet(id, owner);
      throw addressNotFound(id, index);
    }
    const { address, keystore: keystoreText, ...wallet } = found;
    if (owner !== null && wallet.owner !== owner) throw walletNotFound(id);
    const keystore = parseKeystore(keystoreText);
    const derivedKey = await this.derivedKey(wallet, keystore.sealed, password, owner);
    const privateKey = unseal(keystore.sealed, derivedKey);
    const account = signingAccount(bytesToHex(privateKey));
    privateKey.fill(0);
    this.options.cache.rememberAccount(id, password, index, { account, address, owner: wallet.owner });
    return { walletId: id, index, address, account };
  }

  /**
   * As `unlock`, with the address's private key besides (an unlock shared with other instances seals
   * it under the server key). The caller zeroes the key after use.
   */
  async unlockKey(
    id: string,
    index: number,
    password: string,
    owner: string | null = null,
  ): Promise<{ unlocked: UnlockedAddress; privateKey: Uint8Array }> {
    const unlocked = await this.unlock(id, index, password, owner);
    // The password was just checked (and its derived key cached): this re-reads, and never counts an attempt.
    const row = await this.options.store.db
      .selectFrom("wallet_addresses as a")
      .innerJoin("wallets as w", "w.id", "a.wallet_id")
      .selectAll("w")
      .select("a.keystore as keystore")
      .where("a.wallet_id", "=", id)
      .where("a.idx", "=", index)
      .executeTakeFirstOrThrow();
    const { keystore: keystoreText, ...wallet } = row;
    const keystore = parseKeystore(keystoreText);
    const derivedKey = await this.derivedKey(wallet, keystore.sealed, password, owner);
    return { unlocked, privateKey: unseal(keystore.sealed, derivedKey) };
  }

  /**
   * Every address's private key, for sealing under the server key (unattended wallets). The password
   * is checked and counted exactly as for an unlock. The caller zeroes the keys after use.
   */
  async openKeys(
    id: string,
    password: string,
    owner: string | null = null,
    /** The admin key acting on a wallet it may not own: its guesses count against its own allowance. */
    admin: string | null = null,
  ): Promise<{ index: number; address: string; privateKey: Uint8Array }[]> {
    const wallet = await this.wallet(id, owner);
    const rows = await this.options.store.db
      .selectFrom("wallet_addresses")
      .selectAll()
      .where("wallet_id", "=", id)
      .orderBy("idx")
      .execute();
    const first = rows[0];
    if (!first) throw addressNotFound(id, 0);
    // Only the owner's attempts count toward the wallet's lock: another key cannot lock its owner out.
    const scope = admin !== null && wallet.owner !== admin ? `${admin}:${wallet.id}` : undefined;
    const derivedKey = await this.derivedKey(
      wallet,
      parseKeystore(first.keystore).sealed,
      password,
      owner,
      scope,
    );
    return rows.map((row) => ({
      index: row.idx,
      address: row.address,
      privateKey: unseal(parseKeystore(row.keystore).sealed, derivedKey),
    }));
  }

  /** The wallet's derived key: from the cache, or one counted password attempt. */
  private async derivedKey(
    wallet: WalletsTable,
    sealed: Parameters<typeof unseal>[0],
    password: string,
    owner: string | null,
    /** Where the attempt is counted when not on the wallet's own allowance. */
    scope?: string,
  ): Promise<Buffer> {
    const cached = this.options.cache.get(wallet.id, password);
    if (cached) return cached;
    // Concurrent unlocks with the same password share one attempt and one derivation.
    const tag = `${this.options.cache.tagOf(wallet.id, password)}${scope === undefined ? "" : `\n${scope}`}`;
    let attempt = this.unlocking.get(tag);
    if (!attempt) {
      attempt = this.attempt(wallet, sealed, password, owner, scope).finally(() =>
        this.unlocking.delete(tag),
      );
      this.unlocking.set(tag, attempt);
    }
    return attempt;
  }

  /**
   * One password attempt: counted in the store before the KDF runs (so concurrent guesses, on any
   * instance, are counted exactly and stop at the lock), then derived in the tenant's turn, then
   * checked; a right password clears the count.
   */
  private async attempt(
    wallet: WalletsTable,
    sealed: Parameters<typeof unseal>[0],
    password: string,
    owner: string | null,
    scope?: string,
  ): Promise<Buffer> {
    await (scope === undefined ? this.attempts.reserve(wallet.id) : this.attempts.reserveScoped(scope));
    const derivedKey = await this.options.deriver.derive(
      password,
      JSON.parse(wallet.kdf) as ScryptParams,
      owner ?? "",
    );
    try {
      unseal(sealed, derivedKey);
    } catch (error) {
      derivedKey.fill(0);
      throw error;
    }
    await (scope === undefined ? this.attempts.clear(wallet.id) : this.attempts.clearScoped(scope));
    this.options.cache.set(wallet.id, password, derivedKey);
    return derivedKey;
  }
}

function toRecord(row: WalletAddressesTable): WalletRecord {
  return {
    id: row.wallet_id,
    type: "KEYSTORE_V3",
    address: row.address,
    public_key: row.public_key,
    index: row.idx,
    data: row.keystore,
  };
}
