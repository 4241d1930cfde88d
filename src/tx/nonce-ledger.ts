/** Nonces per (chain, address), handed out inside the database transaction that records the request. */
import { type Kysely, sql, type Transaction } from "kysely";
import { getAddress } from "viem";
import type { Store } from "../store/database.js";
import { PreparedQuery } from "../store/prepared-query.js";
import type { Database } from "../store/schema.js";
import { stateLiterals } from "../store/state-literal.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nonceOf } from "../upstream/node-reads.js";

type Db = Kysely<Database> | Transaction<Database>;

/** Takes the next nonce (every signed transaction runs it: compiled once, see PreparedQuery). */
const ALLOCATE = new PreparedQuery((db, slot) =>
  db
    .updateTable("nonce_ledger")
    .set((eb) => ({ next_nonce: eb("next_nonce", "+", 1) }))
    .where("chain_id", "=", slot<number>(0))
    .where("address", "=", slot<string>(1))
    .returning("next_nonce"),
);

/** Takes several nonces in one statement. */
const ALLOCATE_MANY = new PreparedQuery((db, slot) =>
  db
    .updateTable("nonce_ledger")
    .set((eb) => ({ next_nonce: eb("next_nonce", "+", slot<number>(0)) }))
    .where("chain_id", "=", slot<number>(1))
    .where("address", "=", slot<string>(2))
    .returning("next_nonce"),
);

export class NonceLedger {
  /** (chain, address) pairs this process has already aligned with the chain since it started. */
  private readonly synced = new Set<string>();

  constructor(private readonly store: Store) {}

  private greatest(): string {
    return this.store.kind === "postgres" ? "greatest" : "max";
  }

  /**
   * Raises the ledger to the chain's pending nonce, never lowers it: a nonce we handed out may
   * belong to a transaction still on its way, and must never be handed out twice.
   */
  async sync(chain: Chain, address: string): Promise<void> {
    const pending = await nonceOf(chain, address);
    await this.raiseTo(this.store.db, chain.chainId, address, pending);
    this.synced.add(`${chain.chainId}:${address.toLowerCase()}`);
  }

  async ensureSynced(chain: Chain, address: string): Promise<void> {
    if (!this.synced.has(`${chain.chainId}:${address.toLowerCase()}`)) await this.sync(chain, address);
  }

  async raiseTo(db: Db, chainId: number, address: string, nonce: number): Promise<void> {
    await db
      .insertInto("nonce_ledger")
      .values({ chain_id: chainId, address: address.toLowerCase(), next_nonce: nonce })
      .onConflict((oc) =>
        oc.columns(["chain_id", "address"]).doUpdateSet({
          next_nonce: sql<number>`${sql.raw(this.greatest())}(nonce_ledger.next_nonce, excluded.next_nonce)`,
        }),
      )
      .execute();
  }

  /**
   * Sets the next nonce to the chain's pending nonce or past the highest record still on its way,
   * whichever is higher; this may lower it (nonces of transactions the chain lost and that could not
   * be resent). The ledger row is locked while the records are read, so no allocation slips between.
   */
  async realign(chainId: number, address: string, chainPending: number): Promise<number> {
    const key = address.toLowerCase();
    const next = await this.store.db.transaction().execute(async (trx) => {
      await trx
        .selectFrom("nonce_ledger")
        .select("next_nonce")
        .where("chain_id", "=", chainId)
        .where("address", "=", key)
        .$if(this.store.kind === "postgres", (q) => q.forUpdate())
        .executeTakeFirst();
      const live = await trx
        .selectFrom("transactions")
        .select((eb) => eb.fn.max("nonce").as("nonce"))
        .where("chain_id", "=", chainId)
        .where("from_address", "=", getAddress(address))
        .where("state", "in", stateLiterals(["queued", "sent", "mined", "confirmed"]))
        .executeTakeFirst();
      const highest = live?.nonce === null || live?.nonce === undefined ? -1 : Number(live.nonce);
      const value = Math.max(chainPending, highest + 1);
      await trx
        .insertInto("nonce_ledger")
        .values({ chain_id: chainId, address: key, next_nonce: value })
        .onConflict((oc) => oc.columns(["chain_id", "address"]).doUpdateSet({ next_nonce: value }))
        .execute();
      return value;
    });
    this.synced.add(`${chainId}:${key}`);
    return next;
  }

  /** Sets the next nonce (convergence, under the row's lock): it may lower it, to nonces the chain refused. */
  async setNext(trx: Transaction<Database>, chainId: number, address: string, next: number): Promise<void> {
    await trx
      .insertInto("nonce_ledger")
      .values({ chain_id: chainId, address: address.toLowerCase(), next_nonce: next })
      .onConflict((oc) => oc.columns(["chain_id", "address"]).doUpdateSet({ next_nonce: next }))
      .execute();
    this.synced.add(`${chainId}:${address.toLowerCase()}`);
  }

  /** The next nonce, read without taking it (eth_signTransaction). */
  async peek(chainId: number, address: string, db: Db = this.store.db): Promise<number> {
    const row = await db
      .selectFrom("nonce_ledger")
      .select("next_nonce")
      .where("chain_id", "=", chainId)
      .where("address", "=", address.toLowerCase())
      .executeTakeFirst();
    if (!row) throw new Error(`nonce ledger has no row for ${address} on chain ${chainId}; sync first`);
    return row.next_nonce;
  }

  /** Holds the address's ledger row until `trx` ends, without taking a nonce (eth_signTransaction's rolling limits). */
  async lock(trx: Transaction<Database>, chainId: number, address: string): Promise<void> {
    await trx
      .updateTable("nonce_ledger")
      .set((eb) => ({ next_nonce: eb.ref("next_nonce") }))
      .where("chain_id", "=", chainId)
      .where("address", "=", address.toLowerCase())
      .execute();
  }

  /**
   * Takes the next nonce; call inside the transaction that records the request (the row stays
   * locked until it ends). One statement: the increment locks the row and says what it was.
   */
  async allocate(trx: Transaction<Database>, chainId: number, address: string): Promise<number> {
    const [row] = (await ALLOCATE.execute(trx, [chainId, address.toLowerCase()])).rows;
    if (!row) throw new Error(`nonce ledger has no row for ${address} on chain ${chainId}; sync first`);
    return Number(row.next_nonce) - 1;
  }

  /**
   * Takes the next `count` nonces at once (a joined record's requests of one address, see
   * record-together.ts) and answers the first; the row stays locked until `trx` ends.
   */
  async allocateMany(
    trx: Transaction<Database>,
    chainId: number,
    address: string,
    count: number,
  ): Promise<number> {
    const [row] = (await ALLOCATE_MANY.execute(trx, [count, chainId, address.toLowerCase()])).rows;
    if (!row) throw new Error(`nonce ledger has no row for ${address} on chain ${chainId}; sync first`);
    return Number(row.next_nonce) - count;
  }

  /**
   * Gives back a nonce whose transaction the node refused. When it was the last one handed out it is
   * simply reused by the next request; otherwise later nonces are already out, and the caller must
   * fill the gap ("gap") so they are not stuck behind it.
   */
  async release(
    trx: Transaction<Database>,
    chainId: number,
    address: string,
    nonce: number,
  ): Promise<"freed" | "gap"> {
    const result = await trx
      .updateTable("nonce_ledger")
      .set({ next_nonce: nonce })
      .where("chain_id", "=", chainId)
      .where("address", "=", address.toLowerCase())
      .where("next_nonce", "=", nonce + 1)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? "freed" : "gap";
  }
}
