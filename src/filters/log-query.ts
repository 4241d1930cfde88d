/** eth_getLogs with guardrails: a block-range cap, a result cap, bounded chunks fetched in turn, identical chunks shared. */
import { ChaingateError } from "../errors/chaingate-error.js";
import { FairGate } from "../keys/fair-gate.js";
import type { Chain } from "../upstream/chain-registry.js";
import { concatArrays, JsonText } from "../upstream/json-text.js";
import { headOf as askHead, logsText, nodeRead } from "../upstream/node-reads.js";
import { type LogCriteria, logMatches, matchPart, toHex } from "./filter-criteria.js";

export type Log = Record<string, unknown> & { blockNumber: string; blockHash: string };

export interface LogLimits {
  /** Blocks one query may span. */
  logsRange: number;
  /** Logs one query may answer. */
  logsResults: number;
  /** Addresses, and topics per position, in one criteria object. */
  filterAddresses: number;
}

/** Blocks per upstream call: a wide range never asks a node for one unbounded answer. */
export const CHUNK_BLOCKS = 2_000;
/** Queries one tenant may have running at once; the rest wait their turn (their memory is bounded). */
export const QUERIES_PER_TENANT = 2;

/**
 * A filter poll over at most this many blocks reads each block's logs once for every filter
 * (by block hash, shared), and matches them here.
 */
export const SHARED_POLL_BLOCKS = 4;
/** Blocks whose full logs are kept for the filters still to poll them. */
const SHARED_BLOCKS_KEPT = 32;

/** A read limit was reached: 413 / EIP-1474's -32005 "limit exceeded", as hosted providers answer. */
export function limitExceeded(
  code:
    | "LOG_RANGE_TOO_LARGE"
    | "TOO_MANY_RESULTS"
    | "FILTER_TOO_LARGE"
    | "FILTER_LIMIT"
    | "SUBSCRIPTION_LIMIT"
    | "RESPONSE_TOO_LARGE",
  message: string,
): ChaingateError {
  return new ChaingateError(message, { code });
}

/** What is too large in criteria (addresses or topics), or undefined. */
export function criteriaSizeProblem(criteria: LogCriteria, max: number): string | undefined {
  const addresses = Array.isArray(criteria.address) ? criteria.address.length : 0;
  if (addresses > max) return `the filter lists ${addresses} addresses; at most ${max} are allowed`;
  for (const [i, topic] of (criteria.topics ?? []).entries()) {
    if (Array.isArray(topic) && topic.length > max)
      return `the filter lists ${topic.length} topics at position ${i}; at most ${max} are allowed`;
  }
  return undefined;
}

export class LogQuery {
  private readonly shared = new Map<string, Promise<Log[]>>();
  private readonly sharedText = new Map<string, Promise<JsonText>>();
  /** Every log of a recent block, by chain and block hash (a hash names one block for good). */
  private readonly blocks = new Map<string, Promise<Log[]>>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  /**
   * Client log queries (eth_getLogs, eth_getFilterLogs) in flight at once per chain, one per upstream,
   * served to tenants in turn. A node answers a large log query serially while it holds its core:
   * one in flight leaves another core for everyone else's reads (two took a balance read on anvil
   * from 1.1 to 28 ms at p50, one to 2.7 ms: bench:abuse).
   */
  private readonly heavy = new Map<number, FairGate>();

  constructor(private readonly limits: LogLimits) {}

  private gateOf(chain: Chain): FairGate {
    let gate = this.heavy.get(chain.chainId);
    if (!gate) {
      gate = new FairGate({
        what: "log queries",
        code: "UPSTREAM_BUSY",
        permits: Math.max(1, chain.pool.upstreams.length),
        perTenant: 256,
        queue: 4096,
      });
      this.heavy.set(chain.chainId, gate);
    }
    return gate;
  }

  checkSize(criteria: LogCriteria): void {
    const problem = criteriaSizeProblem(criteria, this.limits.filterAddresses);
    if (problem) throw limitExceeded("FILTER_TOO_LARGE", problem);
  }

  /**
   * Every log the criteria match, as the nodes' JSON text (a large answer is passed on, not parsed
   * and written again), or a clear error when the range or the answer is too large.
   */
  async all(
    chain: Chain,
    criteria: LogCriteria,
    tenant: string,
    /** Throws when the caller can no longer hold an answer: asked again when the turn comes. */
    mayHoldMore?: () => void,
  ): Promise<JsonText> {
    this.checkSize(criteria);
    return this.turn(tenant, async () => {
      mayHoldMore?.();
      if (criteria.blockHash !== undefined) {
        return this.cappedText(
          await this.fetchText(
            chain,
            { ...matchPart(criteria), blockHash: criteria.blockHash },
            tenant,
            mayHoldMore,
          ),
          0,
        );
      }
      const head = await knownHead(chain);
      const from = await blockOf(chain, criteria.fromBlock, head);
      const to = await blockOf(chain, criteria.toBlock, head);
      if (from > to) return new JsonText("[]");
      const span = to - from + 1;
      if (span > this.limits.logsRange) {
        throw limitExceeded(
          "LOG_RANGE_TOO_LARGE",
          `block range is too large: ${span} blocks; at most ${this.limits.logsRange} (split the query)`,
        );
      }
      if (span <= CHUNK_BLOCKS) {
        // One call, with the caller's own block parameters: the node resolves "latest" itself.
        const own = {
          ...matchPart(criteria),
          ...(criteria.fromBlock === undefined ? {} : { fromBlock: criteria.fromBlock }),
          ...(criteria.toBlock === undefined ? {} : { toBlock: criteria.toBlock }),
        };
        return this.cappedText(await this.fetchText(chain, own, tenant, mayHoldMore), 0);
      }
      const parts: JsonText[] = [];
      let count = 0;
      for (let start = from; start <= to; ) {
        const end = Math.min(to, (Math.floor(start / CHUNK_BLOCKS) + 1) * CHUNK_BLOCKS - 1);
        const part = await this.fetchText(
          chain,
          { ...matchPart(criteria), fromBlock: toHex(start), toBlock: toHex(end) },
          tenant,
          mayHoldMore,
        );
        this.cappedText(part, count);
        count += part.items;
        parts.push(part);
        start = end + 1;
      }
      return concatArrays(parts);
    });
  }

  /**
   * For a filter's changes: the logs of [from, to] in whole chunks of `chunk` blocks, stopping once
   * the result cap would be passed; answers the logs and the last block they cover.
   */
  async upTo(
    chain: Chain,
    criteria: LogCriteria,
    from: number,
    to: number,
    tenant: string,
    chunk = 100,
  ): Promise<{ logs: Log[]; last: number; lastHash?: string }> {
    if (to - from + 1 <= SHARED_POLL_BLOCKS)
      return this.turn(tenant, () => this.fromBlocks(chain, criteria, from, to));
    return this.turn(tenant, async () => {
      const out: Log[] = [];
      let last = from - 1;
      for (let start = from; start <= to; ) {
        const end = Math.min(to, start + chunk - 1);
        const logs = await this.fetch(chain, {
          ...matchPart(criteria),
          fromBlock: toHex(start),
          toBlock: toHex(end),
        });
        // The first chunk is always delivered, so a filter always moves on.
        if (out.length > 0 && out.length + logs.length > this.limits.logsResults) break;
        for (const log of logs) out.push(log);
        last = end;
        start = end + 1;
      }
      return { logs: out, last };
    });
  }

  /**
   * The usual poll (a block or a few): each block's logs are read once, by its hash, whatever number
   * of filters polls it, and matched against these criteria. The hash of the last block read is
   * answered too, so the filter's cursor names exactly the block it delivered (a reorg is then seen).
   */
  private async fromBlocks(
    chain: Chain,
    criteria: LogCriteria,
    from: number,
    to: number,
  ): Promise<{ logs: Log[]; last: number; lastHash?: string }> {
    const out: Log[] = [];
    let last = from - 1;
    let lastHash: string | undefined;
    for (let n = from; n <= to; n++) {
      const block = await nodeRead(chain, "eth_getBlockByNumber", [toHex(n), false]);
      // The node answering has not seen it yet: deliver up to here.
      if (!block?.hash) break;
      for (const log of await this.blockLogs(chain, block.hash))
        if (logMatches(criteria, log as { address?: string; topics?: string[] })) out.push(log);
      last = n;
      lastHash = block.hash;
    }
    return lastHash === undefined ? { logs: out, last } : { logs: out, last, lastHash };
  }

  private blockLogs(chain: Chain, hash: string): Promise<Log[]> {
    const key = `${chain.chainId}:${hash}`;
    let logs = this.blocks.get(key);
    if (!logs) {
      logs = nodeRead(chain, "eth_getLogs", [{ blockHash: hash }]);
      logs.catch(() => this.blocks.delete(key));
      this.blocks.set(key, logs);
      if (this.blocks.size > SHARED_BLOCKS_KEPT)
        this.blocks.delete(this.blocks.keys().next().value as string);
    }
    return logs;
  }

  private cappedText(logs: JsonText, already: number): JsonText {
    if (already + logs.items > this.limits.logsResults) {
      throw limitExceeded(
        "TOO_MANY_RESULTS",
        `query returned more than ${this.limits.logsResults} results (narrow the block range or the filter)`,
      );
    }
    return logs;
  }

  /** As fetch, answering the node's own text (one call per distinct chunk in flight, whoever asks). */
  private fetchText(
    chain: Chain,
    params: LogCriteria,
    tenant: string,
    mayHoldMore?: () => void,
  ): Promise<JsonText> {
    const key = `${chain.chainId}:text:${JSON.stringify(params)}`;
    let pending = this.sharedText.get(key);
    if (!pending) {
      pending = this.gateOf(chain)
        .run(tenant, () => {
          // Asked again once its turn has come: the key may have been answered its share meanwhile.
          mayHoldMore?.();
          return logsText(chain, params);
        })
        .finally(() => this.sharedText.delete(key));
      this.sharedText.set(key, pending);
    }
    return pending;
  }

  /** One upstream call per distinct chunk in flight, whoever asks. */
  private fetch(chain: Chain, params: LogCriteria): Promise<Log[]> {
    const key = `${chain.chainId}:${JSON.stringify(params)}`;
    let pending = this.shared.get(key);
    if (!pending) {
      pending = nodeRead(chain, "eth_getLogs", [params]).finally(() => this.shared.delete(key));
      this.shared.set(key, pending);
    }
    return pending;
  }

  /** Runs `work` when the tenant has fewer than QUERIES_PER_TENANT queries running. */
  private async turn<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    if ((this.running.get(tenant) ?? 0) >= QUERIES_PER_TENANT) {
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(tenant) ?? [];
        queue.push(resolve);
        this.waiting.set(tenant, queue);
      });
    }
    this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = (this.running.get(tenant) ?? 1) - 1;
      if (left === 0) this.running.delete(tenant);
      else this.running.set(tenant, left);
      const queue = this.waiting.get(tenant);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(tenant);
      next?.();
    }
  }
}

/** The head the chain's tracker knows, or a node's when it knows none yet. */
async function knownHead(chain: Chain): Promise<number> {
  const known = chain.head?.head;
  if (known !== undefined) return known;
  return askHead(chain);
}

/** A block parameter as a number: tags resolved against the head (safe and finalized asked of the node). */
async function blockOf(chain: Chain, tag: string | undefined, head: number): Promise<number> {
  if (tag === undefined || tag === "latest" || tag === "pending") return head;
  if (tag === "earliest") return 0;
  if (tag.startsWith("0x")) return Number.parseInt(tag.slice(2), 16);
  const block = await nodeRead(chain, "eth_getBlockByNumber", [tag, false]);
  return block?.number ? Number.parseInt(block.number.slice(2), 16) : head;
}
