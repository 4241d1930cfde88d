/** Custody wallets: create or import, list, fetch, and unlock an address's key for signing. */
import { randomUUID } from "node:crypto";
import { bytesToHex, getAddress, type Hex, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { badRequest, ChaingateError } from "../errors/chaingate-error.js";
import { checkedAccount, signatureGuard } from "../keys/checked-signer.js";
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
import type { Pkcs11Token } from "../keys/pkcs11-token.js";
import { signingAccount } from "../keys/signing-account.js";
import type { UnlockCache } from "../keys/unlock-cache.js";
import type { Store } from "../store/database.js";
import type { WalletAddressesTable, WalletsTable } from "../store/schema.js";
import { PasswordAttempts } from "./password-attempts.js";
import { addressNotFound, walletNotFound } from "./wallet-errors.js";

export interface WalletRecord {
  id: string;
  type: "KEYSTORE_V3" | "PKCS11";
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
  /** PKCS11: keys already on the token to adopt, by label or id (hex), instead of new ones. */
  keys?: readonly string[] | undefined;
}

export interface WalletServiceOptions {
  store: Store;
  deriver: KeyDeriver;
  cache: UnlockCache;
  kdf: KdfPreset;
  maxAddresses: number;
  /** The PKCS#11 token PKCS11 wallets keep their keys on; absent: such wallets are refused. */
  hsm?: Pkcs11Token | undefined;
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
  /** Token-backed accounts, by token and key id (they hold no secret). */
  private readonly tokenAccounts = new Map<string, LocalAccount>();

  constructor(private readonly options: WalletServiceOptions) {
    this.now = options.now ?? Date.now;
    this.attempts = new PasswordAttempts(options.store, this.now);
  }

  async create(input: CreateWalletInput, owner: string | null = null): Promise<WalletRecord[]> {
    if (input.type === "PKCS11") return this.createOnToken(input, owner);
    if (input.type !== "KEYSTORE_V3") {
      throw badRequest(
        "INVALID_WALLET_TYPE",
        `type must be KEYSTORE_V3 or PKCS11, got ${JSON.stringify(input.type)}`,
      );
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

    await this.insertWallet(
      { id, type: "KEYSTORE_V3", source, kdf: JSON.stringify(kdf), sealed_seed: sealedSeed, owner },
      rows,
    );
    this.options.cache.set(id, password, derivedKey);
    derivedKey.fill(0);
    await this.options.onAddressesCreated?.(rows.map((r) => r.address));
    return rows.map(toRecord);
  }

  /**
   * A wallet whose keys live on the PKCS#11 token: new secp256k1 key pairs made there (or existing
   * ones adopted by label or id). The store keeps where each key is (token label, key id), never a
   * secret; the wallet signs with no password, for its owner only.
   */
  private async createOnToken(input: CreateWalletInput, owner: string | null): Promise<WalletRecord[]> {
    const hsm = this.options.hsm;
    if (hsm === undefined)
      throw new ChaingateError(
        "PKCS11 wallets need a token: start chaingate with --pkcs11-module, --pkcs11-token and --pkcs11-pin-file",
        { code: "HSM_NOT_CONFIGURED" },
      );
    if (input.password !== undefined && input.password !== null)
      throw badRequest("INVALID_IMPORT", "PKCS11 wallets take no password: their keys never leave the token");
    if (input.mnemonic !== undefined || input.keystore !== undefined)
      throw badRequest(
        "INVALID_IMPORT",
        "PKCS11 wallets make their keys on the token (or adopt them with `keys`)",
      );
    const quantity = input.keys?.length ?? input.addressQuantity;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > this.options.maxAddresses)
      throw badRequest(
        "INVALID_ADDRESS_QUANTITY",
        `address_quantity must be an integer from 1 to ${this.options.maxAddresses}`,
      );
    if (input.keys !== undefined && input.addressQuantity !== input.keys.length)
      throw badRequest("INVALID_ADDRESS_QUANTITY", "address_quantity must be the number of keys adopted");
    const id = randomUUID();
    const keys = [];
    for (let index = 0; index < quantity; index++)
      keys.push(
        input.keys === undefined
          ? await hsm.generate(`chaingate:${id}:${index}`)
          : await hsm.find(input.keys[index]!),
      );
    const createdAt = this.now();
    const rows: WalletAddressesTable[] = keys.map((key, index) => ({
      wallet_id: id,
      idx: index,
      address: getAddress(key.address),
      public_key: key.publicKey,
      keystore: JSON.stringify(tokenKeyRef(hsm.options.token, key)),
      created_at: createdAt,
    }));
    await this.insertWallet(
      { id, type: "PKCS11", source: "pkcs11", kdf: "{}", sealed_seed: null, owner },
      rows,
    );
    await this.options.onAddressesCreated?.(rows.map((r) => r.address));
    return rows.map(toRecord);
  }

  /** Whether the wallet signs with no password (its keys are on a PKCS#11 token); false for a missing one. */
  async signsWithoutPassword(id: string): Promise<boolean> {
    const row = await this.options.store.db
      .selectFrom("wallets")
      .select("type")
      .where("id", "=", id)
      .executeTakeFirst();
    return row?.type === "PKCS11";
  }

  /** Stores a new wallet and its addresses in one transaction. */
  private async insertWallet(
    wallet: Pick<WalletsTable, "id" | "type" | "source" | "kdf" | "sealed_seed" | "owner">,
    rows: WalletAddressesTable[],
  ): Promise<void> {
    await this.options.store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("wallets")
        .values({
          ...wallet,
          address_count: rows.length,
          failed_attempts: 0,
          locked_until: 0,
          created_at: rows[0]!.created_at,
        })
        .execute();
      await trx.insertInto("wallet_addresses").values(rows).execute();
    });
  }

  /** The signing account of a PKCS11 wallet's address: the token signs, every signature verified. */
  tokenAccount(address: string, publicKey: string, keystoreText: string): LocalAccount | undefined {
    const ref = readTokenKeyRef(keystoreText);
    const hsm = this.options.hsm;
    if (ref === undefined) return undefined;
    if (hsm === undefined || hsm.options.token !== ref.token)
      throw new ChaingateError(
        `this address's key is on PKCS#11 token "${ref.token}", which this instance is not configured for`,
        { code: "HSM_NOT_CONFIGURED" },
      );
    const key = `${ref.token}\n${ref.key_id}`;
    let account = this.tokenAccounts.get(key);
    if (account === undefined) {
      account = checkedAccount(
        getAddress(address),
        publicKey as Hex,
        (hash) => hsm.sign(ref.key_id, hash),
        signatureGuard,
        "pkcs11",
      );
      this.tokenAccounts.set(key, account);
    }
    return account;
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

  /** Every wallet's records with its owner (the API key that may use it; null: made before keys existed), for an admin. */
  async listAll(): Promise<(WalletRecord & { owner: string | null })[]> {
    const rows = await this.options.store.db
      .selectFrom("wallet_addresses")
      .innerJoin("wallets", "wallets.id", "wallet_addresses.wallet_id")
      .selectAll("wallet_addresses")
      .select("wallets.owner")
      .orderBy("wallets.created_at")
      .orderBy("wallet_addresses.wallet_id")
      .orderBy("wallet_addresses.idx")
      .execute();
    return rows.map((row) => ({ ...toRecord(row), owner: row.owner }));
  }

  /** Wallets no API key owns (made before keys were turned on): how many. */
  async unowned(): Promise<number> {
    const row = await this.options.store.db
      .selectFrom("wallets")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("owner", "is", null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Gives a wallet to an API key (an operator's act: the key then lists it and signs with it). */
  async assign(id: string, keyId: string): Promise<void> {
    const result = await this.options.store.db
      .updateTable("wallets")
      .set({ owner: keyId })
      .where("id", "=", id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw walletNotFound(id);
    // Opened signers remember the owner they were opened for: this instance forgets them now.
    this.options.cache.delete(id);
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
    if (wallet.type === "PKCS11") {
      // The token holds the key: no password to check, the owner's key is the credential.
      const row = await this.options.store.db
        .selectFrom("wallet_addresses")
        .select("public_key")
        .where("wallet_id", "=", id)
        .where("idx", "=", index)
        .executeTakeFirstOrThrow();
      return {
        walletId: id,
        index,
        address,
        account: this.tokenAccount(address, row.public_key, keystoreText)!,
      };
    }
    if (password === "")
      throw badRequest("PASSWORD_REQUIRED", "password is required to sign with a KEYSTORE_V3 wallet");
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
    type: readTokenKeyRef(row.keystore) === undefined ? "KEYSTORE_V3" : "PKCS11",
    address: row.address,
    public_key: row.public_key,
    index: row.idx,
    data: row.keystore,
  };
}

/** Where a PKCS11 wallet's key is: the token's label and the key's CKA_ID (never a secret). */
interface TokenKeyRef {
  pkcs11: true;
  token: string;
  key_id: string;
  label: string;
}

function tokenKeyRef(token: string, key: { id: string; label: string }): TokenKeyRef {
  return { pkcs11: true, token, key_id: key.id, label: key.label };
}

/** The token reference a PKCS11 address's record holds in place of a keystore; undefined for a keystore. */
export function readTokenKeyRef(text: string): TokenKeyRef | undefined {
  if (!text.startsWith('{"pkcs11"')) return undefined;
  const parsed = JSON.parse(text) as TokenKeyRef;
  return parsed.pkcs11 === true ? parsed : undefined;
}
