/** Per-wallet balance thresholds: an address that falls below raises wallet.balance_low once, and re-arms when it is back above. */
import type { Logger } from "pino";
import type { Store } from "../store/database.js";
import { fixedLimit } from "../store/fixed-limit.js";
import type { ChainRegistry } from "../upstream/chain-registry.js";
import { nodeRead } from "../upstream/node-reads.js";
import { recordEvent } from "./outbox.js";

/** Addresses read per pass, so that many wallets cannot make one pass unbounded. */
const ADDRESSES_PER_PASS = 500;

export interface BalanceWatchOptions {
  store: Store;
  chains: ChainRegistry;
  logger: Logger;
  now?: () => number;
}

export class BalanceWatch {
  private readonly now: () => number;
  /** Where the last pass stopped, so that every address is read in turn when there are more than a pass's worth. */
  private offset = 0;

  constructor(private readonly options: BalanceWatchOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Sets (or replaces) the wallet's threshold on a chain; a new threshold is judged afresh. */
  async set(walletId: string, chainId: number, below: bigint, owner: string | null): Promise<void> {
    await this.replace(walletId, chainId, { below: below.toString(), owner });
  }

  async remove(walletId: string, chainId: number): Promise<void> {
    await this.replace(walletId, chainId, undefined);
  }

  private async replace(
    walletId: string,
    chainId: number,
    alert: { below: string; owner: string | null } | undefined,
  ): Promise<void> {
    await this.options.store.db.transaction().execute(async (trx) => {
      for (const table of ["balance_alerts", "balance_alert_state"] as const) {
        await trx
          .deleteFrom(table)
          .where("wallet_id", "=", walletId)
          .where("chain_id", "=", chainId)
          .execute();
      }
      if (alert) {
        await trx
          .insertInto("balance_alerts")
          .values({ wallet_id: walletId, chain_id: chainId, ...alert, created_at: this.now() })
          .execute();
      }
    });
  }

  /** Reads the balances of watched addresses and raises (or re-arms) their alerts. */
  async pass(): Promise<void> {
    const { store, chains } = this.options;
    const watched = await store.db
      .selectFrom("balance_alerts")
      .innerJoin("wallet_addresses", "wallet_addresses.wallet_id", "balance_alerts.wallet_id")
      .select([
        "balance_alerts.wallet_id",
        "balance_alerts.chain_id",
        "balance_alerts.below",
        "balance_alerts.owner",
        "wallet_addresses.address",
      ])
      .orderBy("balance_alerts.wallet_id")
      .orderBy("balance_alerts.chain_id")
      .orderBy("wallet_addresses.idx")
      .limit(fixedLimit(ADDRESSES_PER_PASS))
      .offset(this.offset)
      .execute();
    this.offset = watched.length < ADDRESSES_PER_PASS ? 0 : this.offset + watched.length;
    for (const row of watched) {
      const chain = chains.get(row.chain_id);
      if (!chain) continue;
      const balance = BigInt(await nodeRead(chain, "eth_getBalance", [row.address, "latest"]));
      const low = balance < BigInt(row.below) ? 1 : 0;
      await store.db.transaction().execute(async (trx) => {
        const address = { wallet_id: row.wallet_id, chain_id: row.chain_id, address: row.address };
        // An address first seen counts as not low; then only the write that changes the state
        // (on one instance, whichever is first) announces it.
        await trx
          .insertInto("balance_alert_state")
          .values({ ...address, low: 0 })
          .onConflict((oc) => oc.doNothing())
          .execute();
        const result = await trx
          .updateTable("balance_alert_state")
          .set({ low })
          .where("wallet_id", "=", address.wallet_id)
          .where("chain_id", "=", address.chain_id)
          .where("address", "=", address.address)
          .where("low", "!=", low)
          .executeTakeFirst();
        const changed = Number(result.numUpdatedRows) === 1;
        if (!changed || low === 0) return;
        await recordEvent(trx, {
          owner: row.owner,
          type: "wallet.balance_low",
          orderKey: `balance:${row.wallet_id}:${row.chain_id}:${row.address}`,
          data: {
            wallet_id: row.wallet_id,
            chain_id: row.chain_id,
            address: row.address,
            balance: balance.toString(),
            below: row.below,
          },
        });
      });
    }
  }
}
