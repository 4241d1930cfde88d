/** Gateway-owned filters: state lives in the store, so any instance and any upstream can answer a poll. */
import { filterNotFound } from "../rpc/rpc-errors.js";
import type { Store } from "../store/database.js";
import type { FiltersTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { type LogCriteria, matchPart, numericBlock, toHex } from "./filter-criteria.js";
import { installNodePendingFilter, readNodePendingFilter } from "./node-pending-filter.js";
import { randomQuantityId } from "./random-id.js";

export interface FilterServiceOptions {
  store: Store;
  idleMs: number;
  now?: () => number;
}

/** Most blocks one poll walks; the rest come on the next poll, so a long-idle filter cannot stall a request. */
const MAX_BLOCKS_PER_POLL = 1_000;

export class FilterService {
  private readonly store: Store;
  private readonly idleMs: number;
  private readonly now: () => number;

  constructor(options: FilterServiceOptions) {
    this.store = options.store;
    this.idleMs = options.idleMs;
    this.now = options.now ?? Date.now;
  }

  async handle(chain: Chain, method: string, params: unknown[]): Promise<unknown> {
    switch (method) {
      case "eth_newBlockFilter":
        return this.install(chain, "block", null, await head(chain));
      case "eth_newFilter": {
        const criteria = params[0] as LogCriteria;
        // A blockHash filter has exactly one block of changes; start just before everything.
        return this.install(chain, "log", criteria, criteria.blockHash ? -1 : await head(chain));
      }
      case "eth_newPendingTransactionFilter":
        return this.installPending(chain);
      case "eth_getFilterChanges":
        return this.changes(chain, params[0] as string);
      case "eth_getFilterLogs":
        return this.logs(chain, params[0] as string);
      case "eth_uninstallFilter":
        return this.uninstall(chain, params[0] as string);
      default:
        throw new Error(`filter engine does not serve ${method}`);
    }
  }

  private async install(
    chain: Chain,
    kind: FiltersTable["kind"],
    criteria: LogCriteria | null,
    cursor: number,
    nodeFilterId: string | null = null,
  ): Promise<string> {
    const id = randomQuantityId();
    const now = this.now();
    await this.store.db
      .insertInto("filters")
      .values({
        id,
        chain_id: chain.chainId,
        kind,
        criteria: criteria === null ? null : JSON.stringify(criteria),
        cursor_block: cursor,
        cursor_hash: null,
        node_filter_id: nodeFilterId,
        created_at: now,
        last_poll_at: now,
      })
      .execute();
    return id;
  }

  private async installPending(chain: Chain): Promise<string> {
    return this.install(chain, "pending", null, 0, await installNodePendingFilter(chain));
  }

  /** Reads a live filter of this chain, or throws "filter not found" (also for expired ones). */
  private async load(chain: Chain, rawId: string): Promise<FiltersTable> {
    const id = rawId.toLowerCase();
    const row = await this.store.db.selectFrom("filters").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row || row.chain_id !== chain.chainId) throw filterNotFound();
    if (row.last_poll_at + this.idleMs < this.now()) {
      await this.store.db.deleteFrom("filters").where("id", "=", id).execute();
      throw filterNotFound();
    }
    return row;
  }

  /**
   * Moves the cursor only if nobody else moved it since we read it; the winner delivers the range,
   * so each change is returned exactly once even with concurrent polls on several instances.
   */
  private async advance(row: FiltersTable, cursor: number, hash: string | null): Promise<boolean> {
    const result = await this.store.db
      .updateTable("filters")
      .set({ cursor_block: cursor, cursor_hash: hash, last_poll_at: this.now() })
      .where("id", "=", row.id)
      .where("cursor_block", "=", row.cursor_block)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async touch(id: string): Promise<void> {
    await this.store.db
      .updateTable("filters")
      .set({ last_poll_at: this.now() })
      .where("id", "=", id)
      .execute();
  }

  private async changes(chain: Chain, id: string): Promise<unknown[]> {
    const row = await this.load(chain, id);
    if (row.kind === "pending") return this.pendingChanges(chain, row);
    const latest = await head(chain);
    if (row.kind === "block") {
      const to = Math.min(latest, row.cursor_block + MAX_BLOCKS_PER_POLL);
      if (to <= row.cursor_block) {
        await this.touch(row.id);
        return [];
      }
      const numbers = range(row.cursor_block + 1, to);
      const blocks = await Promise.all(
        numbers.map((n) => chain.pool.call({ method: "eth_getBlockByNumber", params: [toHex(n), false] })),
      );
      const hashes = blocks.map((b) => (b as { hash: string } | null)?.hash).filter((h): h is string => !!h);
      return (await this.advance(row, to, hashes.at(-1) ?? null)) ? hashes : [];
    }
    const criteria = JSON.parse(row.criteria ?? "{}") as LogCriteria;
    if (criteria.blockHash) {
      if (row.cursor_block >= 0) {
        await this.touch(row.id);
        return [];
      }
      const logs = await chain.pool.call({ method: "eth_getLogs", params: [criteria] });
      return (await this.advance(row, 0, criteria.blockHash)) ? (logs as unknown[]) : [];
    }
    const from = Math.max(row.cursor_block + 1, numericBlock(criteria.fromBlock) ?? 0);
    const to = Math.min(latest, numericBlock(criteria.toBlock) ?? latest, from + MAX_BLOCKS_PER_POLL - 1);
    if (to < from) {
      await this.touch(row.id);
      return [];
    }
    const logs = await chain.pool.call({
      method: "eth_getLogs",
      params: [{ ...matchPart(criteria), fromBlock: toHex(from), toBlock: toHex(to) }],
    });
    return (await this.advance(row, to, null)) ? (logs as unknown[]) : [];
  }

  private async pendingChanges(chain: Chain, row: FiltersTable): Promise<unknown[]> {
    const { hashes, ref } = await readNodePendingFilter(chain, row.node_filter_id ?? "|");
    await this.store.db
      .updateTable("filters")
      .set({ node_filter_id: ref, last_poll_at: this.now() })
      .where("id", "=", row.id)
      .execute();
    return hashes;
  }

  private async logs(chain: Chain, id: string): Promise<unknown> {
    const row = await this.load(chain, id);
    if (row.kind !== "log") throw filterNotFound();
    await this.touch(row.id);
    return chain.pool.call({ method: "eth_getLogs", params: [JSON.parse(row.criteria ?? "{}")] });
  }

  private async uninstall(chain: Chain, rawId: string): Promise<boolean> {
    const result = await this.store.db
      .deleteFrom("filters")
      .where("id", "=", rawId.toLowerCase())
      .where("chain_id", "=", chain.chainId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Removes filters idle for longer than the idle limit; returns how many. */
  async sweep(): Promise<number> {
    const result = await this.store.db
      .deleteFrom("filters")
      .where("last_poll_at", "<", this.now() - this.idleMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

async function head(chain: Chain): Promise<number> {
  const result = await chain.pool.call({ method: "eth_blockNumber", params: [] });
  return Number.parseInt(String(result).slice(2), 16);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
