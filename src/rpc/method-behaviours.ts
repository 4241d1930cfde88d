/** The methods chaingate does more for than validate and forward: every such rule, per method, in this one table (the rows carry the rest). */
import { criteriaProblem, type LogCriteria } from "../filters/filter-criteria.js";
import type { FilterService } from "../filters/filter-service.js";
import type { LogQuery } from "../filters/log-query.js";
import type { Chain } from "../upstream/chain-registry.js";
import { fieldOf } from "../upstream/node-reads.js";
import { blockNumberNotBehind, latestBlockNotBehind } from "./monotonic-head.js";
import {
  blockReceipts,
  completePendingBlock,
  ETH_PROTOCOL_VERSION,
  nextBaseFee,
  storageValues,
  uncleAt,
  uncleCount,
} from "./node-gaps.js";
import { quantityText, standardReceipt, storageKeysAsWords } from "./normalize-results.js";
import { type SyncSendLimits, sendRaw, sendRawSync, syncTimeoutMs } from "./send-raw.js";

/** What a method's own answer may use: the call, the caller's fair share of node slots, and the services. */
export interface AnswerContext {
  chain: Chain;
  params: unknown[];
  tenant: string;
  /** Runs node work in the caller's fair share of upstream slots. */
  fair<T>(work: () => Promise<T>): Promise<T>;
  mayHoldMore?: (() => void) | undefined;
  logs: LogQuery;
  filters: FilterService;
  syncSend: SyncSendLimits;
}

export interface MethodBehaviour {
  /** Checks across parameters that a schema cannot express; returns the problem or undefined. */
  refine?(params: readonly unknown[]): string | undefined;
  /** The params in the one form every node takes, after validation. */
  params?(params: unknown[]): unknown[];
  /** Answers the call in chaingate, instead of forwarding it as it is. */
  answer?(ctx: AnswerContext): Promise<unknown>;
  /** When the node says it lacks the method: an answer made from calls it does serve, or undefined for its refusal. */
  whenUnsupported?(chain: Chain, params: readonly unknown[]): Promise<unknown>;
  /** The node's answer as chaingate answers it: heads learnt from it, standard gaps filled, deviations fixed. */
  result?(chain: Chain, params: readonly unknown[], result: unknown): unknown;
  /** Signatures one call makes (the "sign" budget); one when absent. */
  signatures?(params: readonly unknown[]): number;
}

/** A block number in an answer, told to the chain's head tracker. */
function observe(chain: Chain, number: unknown): void {
  if (typeof number === "string" && /^0x[0-9a-fA-F]+$/.test(number))
    chain.head?.observe(Number.parseInt(number.slice(2), 16));
}

export const BEHAVIOURS: Readonly<Record<string, MethodBehaviour>> = {
  eth_blockNumber: {
    // The head never goes back: a lagging node's answer is raised to the highest head known.
    result: (chain, _params, result) => {
      observe(chain, result);
      return blockNumberNotBehind(chain, result);
    },
  },
  eth_getBlockByNumber: {
    result: (chain, params, result) => {
      observe(chain, fieldOf(result, "number"));
      if (params[0] === "pending") return completePendingBlock(chain, result);
      if (params[0] === "latest") return latestBlockNotBehind(chain, params, result);
      return result;
    },
  },
  eth_getTransactionReceipt: {
    result: (chain, _params, result) => {
      observe(chain, fieldOf(result, "blockNumber"));
      return standardReceipt(result);
    },
  },
  eth_getBlockReceipts: {
    whenUnsupported: (chain, [block]) => blockReceipts(chain, block),
    result: (_chain, _params, result) => (Array.isArray(result) ? result.map(standardReceipt) : result),
  },
  eth_protocolVersion: {
    // geth dropped it in 1.14, Hardhat never had it; anvil answers a bare JSON number.
    whenUnsupported: async () => ETH_PROTOCOL_VERSION,
    result: (_chain, _params, result) => quantityText(result),
  },
  eth_getUncleCountByBlockHash: { whenUnsupported: (chain, [hash]) => uncleCount(chain, "hash", hash) },
  eth_getUncleCountByBlockNumber: { whenUnsupported: (chain, [tag]) => uncleCount(chain, "number", tag) },
  eth_getUncleByBlockHashAndIndex: {
    whenUnsupported: (chain, [hash, index]) => uncleAt(chain, "hash", hash, index),
  },
  eth_getUncleByBlockNumberAndIndex: {
    whenUnsupported: (chain, [tag, index]) => uncleAt(chain, "number", tag, index),
  },
  eth_baseFee: { whenUnsupported: (chain) => nextBaseFee(chain) },
  eth_getStorageValues: {
    // One answer holds every slot asked: the execution-apis document caps a request at 1,024.
    refine: (params) => {
      const slots = Object.values(params[0] as Record<string, unknown[]>).reduce((n, s) => n + s.length, 0);
      return slots > 1024 ? `requests asks ${slots} slots; at most 1024 in one call` : undefined;
    },
    params: storageKeysAsWords,
    whenUnsupported: (chain, [requests, block]) => storageValues(chain, requests, block),
  },
  eth_getLogs: {
    refine: (params) => criteriaProblem(params[0] as LogCriteria),
    // The range and result caps, one tenant's queries in turn, one node call per chunk whoever asks.
    answer: (ctx) => ctx.logs.all(ctx.chain, ctx.params[0] as LogCriteria, ctx.tenant, ctx.mayHoldMore),
  },
  eth_newFilter: { refine: (params) => criteriaProblem(params[0] as LogCriteria) },
  eth_sendRawTransaction: {
    answer: async (ctx) => {
      const hash = await ctx.fair(() => sendRaw(ctx.chain, ctx.params[0] as `0x${string}`));
      // Sent through us: pending filters see it even if no node filter reports it.
      await ctx.filters.noteSent(ctx.chain, hash);
      return hash;
    },
  },
  eth_sendRawTransactionSync: {
    // Only the send takes a node slot; the wait holds none (the head tracker's lookups serve every waiter).
    answer: (ctx) =>
      sendRawSync(ctx.chain, ctx.params[0] as `0x${string}`, syncTimeoutMs(ctx.params[1], ctx.syncSend), {
        send: (work) => ctx.fair(work),
        sent: (hash) => ctx.filters.noteSent(ctx.chain, hash),
      }),
  },
  wallet_sendCalls: {
    // One signature per call of the bundle.
    signatures: ([request]) => {
      const calls = (request as { calls?: unknown[] } | undefined)?.calls;
      return Array.isArray(calls) ? Math.max(1, calls.length) : 1;
    },
  },
};
