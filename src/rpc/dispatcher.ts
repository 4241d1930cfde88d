/** Executes one JSON-RPC call on a chain: look up the method row, validate, then answer or forward. */
import { classifyNodeError } from "../errors/node-errors.js";
import { methodNotFound, NodeRpcError } from "../errors/rpc-errors.js";
import type { LogCriteria } from "../filters/filter-criteria.js";
import type { FilterService } from "../filters/filter-service.js";
import type { LogQuery } from "../filters/log-query.js";
import type { FairGate } from "../keys/fair-gate.js";
import type { Chain } from "../upstream/chain-registry.js";
import { extraNamespaceOf } from "../upstream/upstream-pool.js";
import { type MethodPolicy, methodDenied } from "./method-policy.js";
import { METHODS, METHODS_BY_NAME, SMALL_ANSWERS } from "./method-table.js";
import { blockNumberNotBehind, latestBlockNotBehind } from "./monotonic-head.js";
import { completePendingBlock, WHEN_UNSUPPORTED } from "./node-gaps.js";
import { PARAM_NORMALIZERS, RESULT_NORMALIZERS } from "./normalize-results.js";
import type { JsonText, ResponseCache } from "./response-cache.js";
import { type SyncSendLimits, sendRaw, sendRawSync, syncTimeoutMs } from "./send-raw.js";
import { compileParams, type ParamsValidator } from "./validate-params.js";

export interface DispatcherDeps {
  filters: FilterService;
  /** eth_getLogs with the range and result caps, one tenant's queries in turn. */
  logs: LogQuery;
  cache: ResponseCache;
  /** Answers the signer methods from the caller's custody wallets (see custody/signer-methods.ts). */
  signer: {
    handle(
      chain: Chain,
      method: string,
      params: readonly unknown[],
      context: { owner: string | null; idempotencyKey?: string | undefined },
    ): Promise<unknown>;
  };
  /**
   * Called before every signature (the custody methods): throws when the caller's "sign" budget is
   * spent, so a batch of 100 signatures costs 100 tokens, not one request's.
   */
  beforeSigning?: (context: CallContext) => void;
  /** Called before every debug_/trace_/txpool_ call: throws when the caller's "trace" budget is spent. */
  beforeTrace?: (context: CallContext) => void;
  /** Told the outcome of every call (metrics). */
  onCall?: (method: string, ok: boolean) => void;
  /** Methods the operator allows; absent: all of the table. */
  policy?: MethodPolicy;
  /**
   * Node calls in flight, shared fairly: when the nodes are saturated, the next call to go is that
   * of the tenant with the fewest in flight, so one tenant's flood cannot queue everyone else.
   */
  upstreamGate?: FairGate;
  /** eth_sendRawTransactionSync's default and longest wait (EIP-7966). */
  syncSend?: SyncSendLimits;
}

const SYNC_SEND_DEFAULTS: SyncSendLimits = { defaultMs: 2_000, maxMs: 60_000 };

/** Methods whose answers carry a block number the head tracker can learn from. */
function observedHead(method: string, result: unknown): number | undefined {
  if (method === "eth_blockNumber" && typeof result === "string") return Number.parseInt(result.slice(2), 16);
  if (
    (method === "eth_getTransactionReceipt" || method === "eth_getBlockByNumber") &&
    result &&
    typeof result === "object"
  ) {
    const n =
      (result as { blockNumber?: unknown; number?: unknown }).blockNumber ??
      (result as { number?: unknown }).number;
    if (typeof n === "string") return Number.parseInt(n.slice(2), 16);
  }
  return undefined;
}

/** Custody methods that neither sign nor derive a key: outside the "sign" budget. */
const NOT_SIGNING = new Set([
  "eth_accounts",
  "personal_lockAccount",
  "eth_fillTransaction",
  "wallet_getCapabilities",
  "wallet_getCallsStatus",
]);

/** Signatures a custody call makes: one, or one per call of an EIP-5792 bundle. */
function signaturesOf(method: string, params: readonly unknown[]): number {
  if (method !== "wallet_sendCalls") return 1;
  const calls = (params[0] as { calls?: unknown[] } | undefined)?.calls;
  return Array.isArray(calls) ? Math.max(1, calls.length) : 1;
}

/** Who is calling: the tenant whose filters and quotas apply (API key id, or `ip:<address>` without keys). */
export interface CallContext {
  tenant: string;
  /** Whose wallets sign: the API key's id, or null without keys. */
  owner?: string | null;
  /** The request's Idempotency-Key (with the call's id appended inside a batch). */
  idempotencyKey?: string | undefined;
  /** Throws when the request may not hold more answers: called before node work (and again when a log query's turn comes). */
  mayHoldMore?: () => void;
}

export class RpcDispatcher {
  private readonly validators: ReadonlyMap<string, ParamsValidator>;

  constructor(private readonly deps: DispatcherDeps) {
    this.validators = new Map(METHODS.map((m) => [m.name, compileParams(m)]));
  }

  /** Resolves to the node's result (as JSON text when it went through the cache); rejects with a ChaingateError. */
  async call(
    chain: Chain,
    method: string,
    params: unknown,
    context: CallContext,
  ): Promise<unknown | JsonText> {
    const onCall = this.deps.onCall;
    if (!onCall) return this.execute(chain, method, params, context);
    try {
      const result = await this.execute(chain, method, params, context);
      onCall(method, true);
      return result;
    } catch (error) {
      onCall(method, false);
      throw error;
    }
  }

  /** Whether `method` is a node read the response cache may answer (what the read fast path serves). */
  isCacheableRead(method: string): boolean {
    const spec = METHODS_BY_NAME.get(method);
    return (
      spec !== undefined && spec.handler === "upstream" && spec.cache !== "none" && method !== "eth_getLogs"
    );
  }

  /**
   * The answer the cache holds for a call, without waiting for anything; undefined when the call
   * must be made (not cached, not cacheable, refused or invalid: `call` says why). An answer given
   * is counted (cache hit, call metric) as `call` counts it.
   */
  cachedAnswer(chain: Chain, method: string, params: unknown): JsonText | undefined {
    const spec = METHODS_BY_NAME.get(method);
    const validate = this.validators.get(method);
    if (!spec || !validate || !this.isCacheableRead(method)) return undefined;
    if (this.deps.policy && !this.deps.policy(method)) return undefined;
    let checked: unknown[];
    try {
      checked = validate(params);
    } catch {
      return undefined;
    }
    const answer = this.deps.cache.peek(chain.chainId, chain.head?.head, spec, checked);
    if (answer === undefined) return undefined;
    this.deps.cache.hits++;
    this.deps.onCall?.(method, true);
    return answer;
  }

  /** A spec method the node does not serve, answered from calls it does serve (rpc/node-gaps.ts); else the node's refusal. */
  private async whenUnsupported(
    chain: Chain,
    method: string,
    params: readonly unknown[],
    error: unknown,
  ): Promise<unknown> {
    const answer = WHEN_UNSUPPORTED[method];
    if (
      answer === undefined ||
      !(error instanceof NodeRpcError) ||
      classifyNodeError(error.message, error.rpcCode, error.data) !== "unsupported"
    )
      throw error;
    const result = await answer(chain, params);
    if (result === undefined) throw error;
    return result;
  }

  private async execute(
    chain: Chain,
    method: string,
    params: unknown,
    context: CallContext,
  ): Promise<unknown | JsonText> {
    const spec = METHODS_BY_NAME.get(method);
    const validate = this.validators.get(method);
    if (!spec || !validate) throw methodNotFound(method);
    if (this.deps.policy && !this.deps.policy(method)) throw methodDenied(method);
    const normalizeParams = PARAM_NORMALIZERS[method];
    const checked = normalizeParams ? normalizeParams(validate(params)) : validate(params);
    // A small answer never floods: it is not held back by the budget of large reads.
    if (!SMALL_ANSWERS.has(method)) context.mayHoldMore?.();
    if (extraNamespaceOf(method) !== undefined) {
      // Refused before the budget is spent when no upstream is marked for the namespace.
      if (!chain.pool.serves(method))
        throw methodNotFound(`${method} (no upstream of this chain is marked for it)`);
      this.deps.beforeTrace?.(context);
    }
    const gate = this.deps.upstreamGate;
    const fair = <T>(work: () => Promise<T>): Promise<T> => (gate ? gate.run(context.tenant, work) : work());
    if (spec.handler === "filters")
      return fair(() => this.deps.filters.handle(chain, method, checked, context.tenant));
    if (spec.handler === "custody") {
      if (!NOT_SIGNING.has(method))
        for (let n = signaturesOf(method, checked); n > 0; n--) this.deps.beforeSigning?.(context);
      try {
        return await this.deps.signer.handle(chain, method, checked, {
          owner: context.owner ?? null,
          idempotencyKey: context.idempotencyKey,
        });
      } finally {
        if (method.startsWith("eth_sendTransaction")) chain.head?.refresh();
      }
    }
    if (method === "eth_getLogs")
      return this.deps.logs.all(chain, checked[0] as LogCriteria, context.tenant, context.mayHoldMore);
    if (method === "eth_sendRawTransaction") {
      try {
        const hash = await fair(() => sendRaw(chain, checked[0] as `0x${string}`));
        // Sent through us: pending filters see it even if no node filter reports it.
        await this.deps.filters.noteSent(chain, hash);
        return hash;
      } finally {
        chain.head?.refresh();
      }
    }
    if (method === "eth_sendRawTransactionSync") {
      const timeoutMs = syncTimeoutMs(checked[1], this.deps.syncSend ?? SYNC_SEND_DEFAULTS);
      // Only the send takes a node slot; the wait holds none (the head tracker's lookups serve every waiter).
      return sendRawSync(chain, checked[0] as `0x${string}`, timeoutMs, {
        send: (work) => fair(work),
        sent: (hash) => this.deps.filters.noteSent(chain, hash),
      });
    }
    const fetch = async () => {
      let result = await fair(() => chain.pool.call({ method, params: checked })).catch((error: unknown) =>
        this.whenUnsupported(chain, method, checked, error),
      );
      const seen = observedHead(method, result);
      if (seen !== undefined) chain.head?.observe(seen);
      if (method === "eth_getBlockByNumber" && checked[0] === "pending")
        result = await completePendingBlock(chain, result);
      if (method === "eth_blockNumber") result = blockNumberNotBehind(chain, result);
      if (method === "eth_getBlockByNumber" && checked[0] === "latest")
        result = await latestBlockNotBehind(chain, checked, result);
      const normalize = RESULT_NORMALIZERS[method];
      return normalize ? normalize(result) : result;
    };
    if (spec.cache === "none") return fetch();
    return this.deps.cache.get(chain.chainId, chain.head?.head, spec, checked, fetch);
  }
}
