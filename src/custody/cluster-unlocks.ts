/** Addresses unlocked by personal_unlockAccount, honoured by every instance on the store until each ends, and locked everywhere at once. */
import { bytesToHex, type LocalAccount } from "viem";
import { signingAccount } from "../keys/signing-account.js";
import type { Store } from "../store/database.js";
import { INSTANCE_STALE_MS } from "../store/instance-registry.js";
import type { SealKey } from "./seal-key.js";

export interface Unlocked {
  account: LocalAccount;
  walletId: string;
  index: number;
  until: number;
}

/**
 * How long an instance trusts its copy of an unlock without reading the store again. The bus makes
 * a lock immediate; this makes it certain within a second even when a notification is missed.
 */
export const UNLOCK_RECHECK_MS = 1_000;

const keyOf = (owner: string | null, address: string) => `${owner ?? ""}\n${address.toLowerCase()}`;
/** What a sealed unlock is bound to: moved to another tenant, address or end, it does not open. */
const sealContext = (owner: string | null, address: string, until: number) =>
  `chaingate unlock\n${owner ?? ""}\n${address.toLowerCase()}\n${until}`;

export class ClusterUnlocks {
  private readonly local = new Map<string, Unlocked & { checkedAt: number }>();
  private readonly now: () => number;

  constructor(
    private readonly options: {
      store: Store;
      sealKey: SealKey | undefined;
      /** This instance's id in the store's heartbeat table (InstanceRegistry). */
      instanceId?: string;
      now?: () => number;
    },
  ) {
    this.now = options.now ?? Date.now;
    const { bus } = options.store;
    bus.on("lock", (event) => this.local.delete(keyOf(event.owner, event.address)));
    bus.on("wallet-lock", (event) => this.forgetWallet(event.walletId));
  }

  /**
   * Whether an unlock made here lets every instance sign: several instances share the store
   * (PostgreSQL) and a server key seals the unlocked key. Without a server key an unlock signs on the
   * instance that made it only (locks still reach every instance).
   */
  get sharedAcrossInstances(): boolean {
    return this.options.store.bus.shared && this.options.sealKey !== undefined;
  }

  /** Records an unlock: here at once, and in the store (the key sealed under the server key, if any). */
  async set(owner: string | null, address: string, entry: Unlocked, privateKey: Uint8Array): Promise<void> {
    const { sealKey, store } = this.options;
    const now = this.now();
    const sealed = sealKey?.seal(privateKey, sealContext(owner, address, entry.until)) ?? null;
    const row = {
      owner: owner ?? "",
      address: address.toLowerCase(),
      wallet_id: entry.walletId,
      idx: entry.index,
      sealed,
      key_id: sealed === null ? null : sealKey!.id,
      until: entry.until,
      created_at: now,
      instance_id: this.options.instanceId ?? null,
    };
    await store.db
      .insertInto("unlocks")
      .values(row)
      .onConflict((oc) => oc.columns(["owner", "address"]).doUpdateSet(row))
      .execute();
    this.local.set(keyOf(owner, address), { ...entry, checkedAt: now });
  }

  /**
   * The live unlock of this tenant's address, made on this instance or another; undefined once it
   * ended, was locked anywhere, or cannot be opened here (no server key).
   */
  async get(owner: string | null, address: string): Promise<Unlocked | undefined> {
    const key = keyOf(owner, address);
    const now = this.now();
    const entry = this.local.get(key);
    if (entry && entry.until <= now) {
      this.local.delete(key);
      return undefined;
    }
    if (entry && (!this.options.store.bus.shared || now - entry.checkedAt < UNLOCK_RECHECK_MS)) return entry;
    if (!this.options.store.bus.shared) return undefined;
    const row = await this.options.store.db
      .selectFrom("unlocks")
      .selectAll()
      .where("owner", "=", owner ?? "")
      .where("address", "=", address.toLowerCase())
      .executeTakeFirst();
    if (!row || row.until <= now) {
      this.local.delete(key);
      return undefined;
    }
    if (entry) {
      // The same address's key: only its end may have moved (a new unlock).
      entry.checkedAt = now;
      entry.until = row.until;
      return entry;
    }
    const { sealKey } = this.options;
    if (row.sealed === null || sealKey === undefined || row.key_id !== sealKey.id) return undefined;
    let account: LocalAccount;
    try {
      const secret = sealKey.open(row.sealed, sealContext(owner, address, row.until));
      account = signingAccount(bytesToHex(secret));
      secret.fill(0);
    } catch {
      return undefined;
    }
    const opened = { account, walletId: row.wallet_id, index: row.idx, until: row.until, checkedAt: now };
    this.local.set(key, opened);
    return opened;
  }

  /**
   * Why a live unlock of the address made on another instance does not open here: made without a
   * server key (its key stayed in that instance's memory), sealed under another server key, or
   * this instance has none; undefined when there is no such unlock.
   */
  async whyNotHere(
    owner: string | null,
    address: string,
  ): Promise<"elsewhere" | "seal_key_mismatch" | "no_server_key" | undefined> {
    if (!this.options.store.bus.shared) return undefined;
    const row = await this.options.store.db
      .selectFrom("unlocks")
      .leftJoin("instances", "instances.id", "unlocks.instance_id")
      .select(["unlocks.sealed", "unlocks.key_id", "unlocks.until", "instances.seen_at"])
      .where("unlocks.owner", "=", owner ?? "")
      .where("unlocks.address", "=", address.toLowerCase())
      .executeTakeFirst();
    if (!row || row.until <= this.now()) return undefined;
    // Unsealed, it lived in its instance's memory only: gone with that instance (a restart included).
    if (row.sealed === null)
      return row.seen_at !== null && row.seen_at > this.now() - INSTANCE_STALE_MS ? "elsewhere" : undefined;
    const { sealKey } = this.options;
    if (sealKey === undefined) return "no_server_key";
    return row.key_id !== sealKey.id ? "seal_key_mismatch" : undefined;
  }

  /** personal_lockAccount: ends the unlock on every instance (the store row, then the bus). */
  async delete(owner: string | null, address: string): Promise<void> {
    this.local.delete(keyOf(owner, address));
    await this.options.store.db
      .deleteFrom("unlocks")
      .where("owner", "=", owner ?? "")
      .where("address", "=", address.toLowerCase())
      .execute();
    await this.options.store.bus.publish({ kind: "lock", owner, address: address.toLowerCase() });
  }

  private forgetWallet(walletId: string): void {
    for (const [key, entry] of this.local) if (entry.walletId === walletId) this.local.delete(key);
  }

  /** Expired unlocks go, here and in the store (run periodically). */
  async prune(): Promise<void> {
    const now = this.now();
    for (const [key, entry] of this.local) if (entry.until <= now) this.local.delete(key);
    await this.options.store.db.deleteFrom("unlocks").where("until", "<=", now).execute();
  }

  clear(): void {
    this.local.clear();
  }
}
