/** Gateway-owned filters: state lives in the store, so any instance and any upstream can answer a poll. */
import type { Hex } from "viem";
import { filterNotFound } from "../errors/rpc-errors.js";
import type { Store } from "../store/database.js";
import type { FiltersTable } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import type { JsonText } from "../upstream/json-text.js";
import { headOf as askHead, blockHashAt, type NodeBlock, nodeRead } from "../upstream/node-reads.js";
import { canonicalBase } from "./canonical-base.js";
import { type LogCriteria, numericBlock, toHex } from "./filter-criteria.js";
import { type Log, type LogQuery, limitExceeded } from "./log-query.js";
import type { PendingPool } from "./pending-pool.js";
import { randomQuantityId } from "./random-id.js";

export interface FilterServiceOptions {
  store: Store;
  /** Pending-transaction hashes as the gateway saw them. */
  pending: PendingPool;
  idleMs: number;
  /** eth_getLogs with the range and result caps. */
  logs: LogQuery;
  /** Filters one tenant may hold. */
  maxPerTenant: number;
  now?: () => number;
}

/** Most blocks one poll walks; the rest come on the next poll, so a long-idle filter cannot stall a request. */
const MAX_BLOCKS_PER_POLL = 1_000;

export class FilterService {
  private readonly store: Store;
  private readonly pending: PendingPool;
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly logQuery: LogQuery;
  private readonly maxPerTenant: number;

  constructor(options: FilterServiceOptions) {
    this.store = options.store;
    this.pending = options.pending;
    this.idleMs = options.idleMs;
    this.logQuery = options.logs;
    this.maxPerTenant = options.maxPerTenant;
    this.now = options.now ?? Date.now;
  }

  /** `tenant` owns what it installs; another tenant's filter id is "filter not found". */
  async handle(chain: Chain, method: string, params: unknown[], tenant: string): Promise<unknown> {
    switch (method) {
      case "eth_newBlockFilter":
        await this.checkQuota(tenant);
        return this.install(chain, tenant, "block", null, ...(await headAndHash(chain)));
      case "eth_newFilter": {
        const criteria = params[0] as LogCriteria;
        this.logQuery.checkSize(criteria);
        await this.checkQuota(tenant);
        // A blockHash filter has exactly one block of changes; start just before everything.
        return criteria.blockHash
          ? this.install(chain, tenant, "log", criteria, -1, null)
          : this.install(chain, tenant, "log", criteria, ...(await headAndHash(chain)));
      }
      case "eth_newPendingTransactionFilter":
        await this.checkQuota(tenant);
        return this.installPending(chain, tenant);
      case "eth_getFilterChanges":
        return this.changes(chain, params[0] as string, tenant);
      case "eth_getFilterLogs":
        return this.logs(chain, params[0] as string, tenant);
      case "eth_uninstallFilter":
        return this.uninstall(chain, params[0] as string, tenant);
      default:
        throw new Error(`filter engine does not serve ${method}`);
    }
  }

  /** Filters left over from idle ones count until the sweep removes them, so a tenant cannot outrun it. */
  private async checkQuota(tenant: string): Promise<void> {
    const row = await this.store.db
      .selectFrom("filters")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("owner", "=", tenant)
      .executeTakeFirst();
    if (Number(row?.n ?? 0) >= this.maxPerTenant) {
      throw limitExceeded(
        "FILTER_LIMIT",
        `too many filters: at most ${this.maxPerTenant} per API key; uninstall some (eth_uninstallFilter) or let idle ones expire`,
      );
    }
  }

  private async install(
    chain: Chain,
    tenant: string,
    kind: FiltersTable["kind"],
    criteria: LogCriteria | null,
    cursor: number,
    cursorHash: string | null,
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
        cursor_hash: cursorHash,
        node_filter_id: nodeFilterId,
        created_at: now,
        last_poll_at: now,
        recent: null,
        owner: tenant,
      })
      .execute();
    return id;
  }

  private async installPending(chain: Chain, tenant: string): Promise<string> {
    await this.pending.activate(chain);
    return this.install(chain, tenant, "pending", null, await this.pending.latest(chain.chainId), null);
  }

  /** Reads a live filter of this chain and tenant, or throws "filter not found" (also for expired ones). */
  private async load(chain: Chain, rawId: string, tenant: string): Promise<FiltersTable> {
    const id = rawId.toLowerCase();
    const row = await this.store.db.selectFrom("filters").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row || row.chain_id !== chain.chainId || row.owner !== tenant) throw filterNotFound();
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
  private async advance(
    row: FiltersTable,
    cursor: number,
    hash: string | null,
    recent: RecentBlock[] = [],
  ): Promise<boolean> {
    const kept = recent.filter((b) => b.n > cursor - REORG_WINDOW).sort((a, b) => a.n - b.n);
    const result = await this.store.db
      .updateTable("filters")
      .set({
        cursor_block: cursor,
        cursor_hash: hash,
        last_poll_at: this.now(),
        recent: kept.length === 0 ? null : JSON.stringify(kept),
      })
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

  private async changes(chain: Chain, id: string, tenant: string): Promise<unknown[] | JsonText> {
    const row = await this.load(chain, id, tenant);
    if (row.kind === "pending") return this.pendingChanges(chain, row);
    const criteria = row.kind === "log" ? (JSON.parse(row.criteria ?? "{}") as LogCriteria) : undefined;
    if (criteria?.blockHash) {
      if (row.cursor_block >= 0) {
        await this.touch(row.id);
        return [];
      }
      const logs = await this.logQuery.all(chain, criteria, tenant);
      return (await this.advance(row, 0, criteria.blockHash)) ? logs : [];
    }
    const latest = await askHead(chain);
    const rewound = await this.rewind(chain, row);
    if (rewound === undefined) {
      // The node answering has not seen our cursor block yet (it lags): nothing to say until it has.
      await this.touch(row.id);
      return [];
    }
    const { base, recent, removed } = rewound;

    if (row.kind === "block") {
      const to = Math.min(latest, base + MAX_BLOCKS_PER_POLL);
      if (to <= base && removed.length === 0) {
        await this.touch(row.id);
        return [];
      }
      const blocks = await Promise.all(
        range(base + 1, to).map((n) => nodeRead(chain, "eth_getBlockByNumber", [toHex(n), false])),
      );
      const found = blocks.filter(
        (b): b is NodeBlock & { hash: Hex; number: Hex } =>
          b !== null && b.hash !== null && b.number !== null,
      );
      const delivered = found.map((b) => ({ n: Number.parseInt(b.number, 16), h: b.hash }));
      const last = delivered.at(-1) ?? recent.at(-1);
      const ok = await this.advance(row, last?.n ?? base, last?.h ?? null, [...recent, ...delivered]);
      return ok ? found.map((b) => b.hash) : [];
    }

    const from = Math.max(base + 1, numericBlock(criteria!.fromBlock) ?? 0);
    const wantedTo = Math.min(
      latest,
      numericBlock(criteria!.toBlock) ?? latest,
      from + MAX_BLOCKS_PER_POLL - 1,
    );
    // Nothing new to read (or the node answering has not seen the next block yet).
    const nothingNew = async (): Promise<unknown[]> => {
      if (removed.length === 0) {
        await this.touch(row.id);
        return [];
      }
      const at = recent.at(-1);
      return (await this.advance(row, base, at?.h ?? null, recent)) ? removed : [];
    };
    if (wantedTo < from) return nothingNew();
    // In whole chunks up to the result cap; the rest comes with the next poll.
    const fetched = await this.logQuery.upTo(chain, criteria!, from, wantedTo, tenant);
    const to = fetched.last;
    if (to < from) return nothingNew();
    const { logs } = fetched;
    const toHash = fetched.lastHash ?? (await blockHashAt(chain, to));
    // Remember each block that had logs (to take them back after a reorg) and the new cursor block.
    const byBlock = new Map<number, RecentBlock>();
    for (const log of logs) {
      const n = Number.parseInt(log.blockNumber, 16);
      const entry = byBlock.get(n) ?? { n, h: log.blockHash, logs: [] };
      entry.logs!.push(log);
      byBlock.set(n, entry);
    }
    if (!byBlock.has(to) && toHash !== null) byBlock.set(to, { n: to, h: toHash });
    const ok = await this.advance(row, to, toHash, [...recent, ...byBlock.values()]);
    return ok ? [...removed, ...logs] : [];
  }

  /**
   * Checks that the last block delivered is still canonical. When a reorg replaced it, walks back
   * through the blocks remembered until one still is: the logs of every replaced block come back
   * with `removed: true`, and delivery resumes after that block. Undefined: the node is behind.
   */
  private async rewind(
    chain: Chain,
    row: FiltersTable,
  ): Promise<{ base: number; recent: RecentBlock[]; removed: Log[] } | undefined> {
    const recent = (row.recent ? (JSON.parse(row.recent) as RecentBlock[]) : []).sort((a, b) => a.n - b.n);
    if (row.cursor_hash === null || row.cursor_block < 0)
      return { base: row.cursor_block, recent, removed: [] };
    const canonical = await blockHashAt(chain, row.cursor_block);
    if (canonical === null) return undefined;
    if (canonical === row.cursor_hash) return { base: row.cursor_block, recent, removed: [] };
    const { base, replaced } = await canonicalBase(
      recent,
      (n) => blockHashAt(chain, n),
      Math.max(-1, row.cursor_block - 1),
    );
    const removed = replaced.flatMap((block) => (block.logs ?? []).map((log) => ({ ...log, removed: true })));
    return { base, recent: recent.filter((b) => b.n <= base), removed };
  }

  private async pendingChanges(chain: Chain, row: FiltersTable): Promise<unknown[]> {
    await this.pending.activate(chain);
    const { hashes, last } = await this.pending.read(chain.chainId, row.cursor_block);
    if (hashes.length === 0) {
      await this.touch(row.id);
      return [];
    }
    return (await this.advance(row, last, null)) ? hashes : [];
  }

  /** A transaction sent through the gateway is a pending transaction, whatever the nodes report. */
  async noteSent(chain: Chain, hash: string): Promise<void> {
    if (this.pending.watching(chain.chainId)) await this.pending.record(chain.chainId, [hash]);
  }

  private async logs(chain: Chain, id: string, tenant: string): Promise<unknown> {
    const row = await this.load(chain, id, tenant);
    if (row.kind !== "log") throw filterNotFound();
    await this.touch(row.id);
    return this.logQuery.all(chain, JSON.parse(row.criteria ?? "{}") as LogCriteria, tenant);
  }

  private async uninstall(chain: Chain, rawId: string, tenant: string): Promise<boolean> {
    const result = await this.store.db
      .deleteFrom("filters")
      .where("id", "=", rawId.toLowerCase())
      .where("chain_id", "=", chain.chainId)
      .where("owner", "=", tenant)
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

interface RecentBlock {
  n: number;
  h: string;
  /** Logs delivered from this block (log filters). */
  logs?: Log[];
}

/** Blocks a reorg may replace and still be taken back; deeper reorgs are beyond any chain we front. */
const REORG_WINDOW = 128;

async function headAndHash(chain: Chain): Promise<[number, string | null]> {
  const n = await askHead(chain);
  return [n, await blockHashAt(chain, n)];
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
