/** Executes one JSON-RPC call on a chain: look up the method row, validate, then answer or forward. */
import { invalidConsensus, MethodNotServedError, methodNotFound } from "../errors/rpc-errors.js";
import type { FilterService } from "../filters/filter-service.js";
import type { LogQuery } from "../filters/log-query.js";
import type { FairGate } from "../keys/fair-gate.js";
import type { Chain } from "../upstream/chain-registry.js";
import { consensusRead } from "../upstream/consensus-read.js";
import { extraNamespaceOf } from "../upstream/upstream-pool.js";
import { BEHAVIOURS, type MethodBehaviour } from "./method-behaviours.js";
import { type MethodPolicy, methodDenied } from "./method-policy.js";
import { METHODS, METHODS_BY_NAME, type MethodSpec } from "./method-table.js";
import type { CachePlace, JsonText, ResponseCache } from "./response-cache.js";
import type { SyncSendLimits } from "./send-raw.js";
import { compileParams, type ParamsValidator } from "./validate-params.js";

/** A plain node read's call, worked out once (see `RpcDispatcher.plainCall`): shared, never changed. */
export interface PlainCall {
  readonly method: string;
  readonly spec: MethodSpec;
  readonly behaviour: MethodBehaviour;
  readonly checked: unknown[];
  readonly place: CachePlace;
}

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

/** Who is calling: the tenant whose filters and quotas apply (API key id, or `ip:<address>` without keys). */
export interface CallContext {
  tenant: string;
  /** Whose wallets sign: the API key's id, or null without keys. */
  owner?: string | null;
  /** The request's Idempotency-Key (with the call's id appended inside a batch). */
  idempotencyKey?: string | undefined;
  /** Throws when the request may not hold more answers: called before node work (and again when a log query's turn comes). */
  mayHoldMore?: () => void;
  /** How many upstreams must answer alike (`consensus=N`, `Chaingate-Consensus: N`); the chain's default when absent. */
  consensus?: number | undefined;
}

/**
 * Why `method` cannot be read by consensus, or undefined when it can: only a node read with no
 * effect whose answer chaingate does not make itself (a send, a filter, a custody method or a
 * log query has nothing several upstreams could say alike).
 */
export function consensusRefusal(method: string): string | undefined {
  const spec = METHODS_BY_NAME.get(method);
  if (spec === undefined) return `${method} is not a method chaingate serves`;
  const read =
    spec.handler === "upstream" &&
    !spec.traits.has("send") &&
    BEHAVIOURS[method]?.answer === undefined &&
    (spec.cache !== "none" || spec.traits.has("shared"));
  return read ? undefined : `it is not a plain node read (a send, a filter, a custody method or a log query)`;
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
   * A call of a plain node read (a node read the cache may hold, allowed, with valid parameters, no
   * answer of chaingate's own, no consensus asked of it by the chain's configuration, and no
   * namespace budget to spend), its parameters checked and its cache key written once; undefined
   * when it is not one, or is refused or invalid: `call` then answers it, with its refusal in the
   * usual shape. It depends on the chain, the method and the parameters alone (the configuration is
   * frozen), so a caller may keep it for the same call made again (see http/call-templates.ts).
   */
  plainCall(chain: Chain, method: string, params: unknown): PlainCall | undefined {
    const spec = METHODS_BY_NAME.get(method);
    const validate = this.validators.get(method);
    if (!spec || !validate || !this.isCacheableRead(method)) return undefined;
    if (this.deps.policy && !this.deps.policy(method)) return undefined;
    // A read the operator wants agreed by several upstreams is never answered from one's cached answer.
    if (chain.pool.consensus.methods.has(method) || extraNamespaceOf(method) !== undefined) return undefined;
    const behaviour = BEHAVIOURS[method] ?? NONE;
    if (behaviour.answer) return undefined;
    let checked: unknown[];
    try {
      checked = behaviour.params ? behaviour.params(validate(params)) : validate(params);
    } catch {
      return undefined;
    }
    return { method, spec, behaviour, checked, place: this.deps.cache.place(chain.chainId, spec, checked) };
  }

  /**
   * The answer the cache holds for a plain call (see `plainCall`) at the chain's head, without
   * waiting for anything; undefined when the node must be asked. An answer given is counted (cache
   * hit, call metric) as `call` counts it.
   */
  cachedAnswer(chain: Chain, plain: PlainCall): JsonText | undefined {
    const hit = this.deps.cache.slotAt(chain.head?.head, plain.spec, plain.checked, plain.place).hit;
    if (hit !== undefined) this.countHit(plain.method);
    return hit;
  }

  /**
   * A plain call (see `plainCall`) answered as `call` answers it: the cached answer at once, or the
   * node's answer (coalesced with an identical call in flight, and kept).
   */
  plainRead(chain: Chain, plain: PlainCall, tenant: string): JsonText | Promise<JsonText> {
    const { method, behaviour, checked } = plain;
    const slot = this.deps.cache.slotAt(chain.head?.head, plain.spec, checked, plain.place);
    if (slot.hit !== undefined) {
      this.countHit(method);
      return slot.hit;
    }
    const answer = this.deps.cache.fill(slot, () =>
      this.fromNode(chain, method, behaviour, checked, tenant, slot.paramsText),
    );
    const onCall = this.deps.onCall;
    if (!onCall) return answer;
    return answer.then(
      (result) => {
        onCall(method, true);
        return result;
      },
      (error: unknown) => {
        onCall(method, false);
        throw error;
      },
    );
  }

  private countHit(method: string): void {
    this.deps.cache.hits++;
    this.deps.onCall?.(method, true);
  }

  /**
   * Asks the chain's upstreams (a fair share of the node slots), with the method's rules for a
   * node that lacks it and for the node's answer. A node's answer chaingate does not rework is
   * passed on as the node's own JSON text: no parse and no re-serialising of what only the client
   * reads (and the cache keeps as text).
   */
  private fromNode(
    chain: Chain,
    method: string,
    behaviour: MethodBehaviour,
    checked: unknown[],
    tenant: string,
    paramsText?: string,
  ): Promise<unknown> {
    const call = behaviour.result
      ? { method, params: checked, paramsText }
      : { method, params: checked, paramsText, asText: true };
    const gate = this.deps.upstreamGate;
    // Chained, not awaited in an async frame: one promise on a forwarded read where the frame
    // made three (neither the gate nor the pool throws; each refuses with a rejection).
    const asked = (gate ? gate.run(tenant, () => chain.pool.call(call)) : chain.pool.call(call)).then(
      undefined,
      (error: unknown) => whenUnsupported(behaviour, chain, checked, error),
    );
    const rework = behaviour.result;
    return rework ? asked.then((result) => rework(chain, checked, result)) : asked;
  }

  /**
   * Looks up the row, validates, spends the caller's budgets, then answers by the row's handler: the
   * method's own answer where it has one (method-behaviours.ts), else forwarded, with the method's
   * rules for a node that lacks it and for the node's answer.
   */
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
    const behaviour = BEHAVIOURS[method] ?? NONE;
    const checked = behaviour.params ? behaviour.params(validate(params)) : validate(params);
    const consensus = context.consensus ?? chain.pool.consensus.methods.get(method);
    if (consensus !== undefined) checkConsensus(chain, method, consensus);
    if (!spec.traits.has("small")) context.mayHoldMore?.();
    if (extraNamespaceOf(method) !== undefined) {
      // Refused before the budget is spent when no upstream is marked for the namespace.
      if (!chain.pool.serves(method))
        throw methodNotFound(`${method} (no upstream of this chain is marked for it)`);
      this.deps.beforeTrace?.(context);
    }
    const gate = this.deps.upstreamGate;
    const fair = <T>(work: () => Promise<T>): Promise<T> => (gate ? gate.run(context.tenant, work) : work());
    try {
      if (spec.handler === "filters")
        return await fair(() => this.deps.filters.handle(chain, method, checked, context.tenant));
      if (spec.handler === "custody") {
        if (!spec.traits.has("unsigned"))
          for (let n = behaviour.signatures?.(checked) ?? 1; n > 0; n--) this.deps.beforeSigning?.(context);
        return await this.deps.signer.handle(chain, method, checked, {
          owner: context.owner ?? null,
          idempotencyKey: context.idempotencyKey,
        });
      }
      if (behaviour.answer)
        return await behaviour.answer({
          chain,
          params: checked,
          tenant: context.tenant,
          fair,
          mayHoldMore: context.mayHoldMore,
          logs: this.deps.logs,
          filters: this.deps.filters,
          syncSend: this.deps.syncSend ?? SYNC_SEND_DEFAULTS,
        });
      if (consensus !== undefined && consensus > 1) {
        const policy = chain.pool.consensus.onDisagreement;
        const agreed = await fair(() => consensusRead(chain, { method, params: checked }, consensus, policy));
        return behaviour.result ? behaviour.result(chain, checked, agreed) : agreed;
      }
      const fetch = () => this.fromNode(chain, method, behaviour, checked, context.tenant);
      if (spec.cache === "none") return await fetch();
      return await this.deps.cache.get(chain.chainId, chain.head?.head, spec, checked, fetch);
    } finally {
      // A send changes what the next read should see: the head is read again at once.
      if (spec.traits.has("send")) chain.head?.refresh();
    }
  }
}

const NONE: MethodBehaviour = {};

function checkConsensus(chain: Chain, method: string, n: number): void {
  const refusal = consensusRefusal(method);
  if (refusal !== undefined) throw invalidConsensus(`consensus cannot be asked of ${method}: ${refusal}`);
  const configured = chain.pool.upstreams.length;
  if (n > configured)
    throw invalidConsensus(
      `consensus=${n} cannot be met: chain ${chain.chainId} has ${configured} upstream(s)`,
    );
}

/** A method the node does not serve, answered from calls it does serve where the method has a rule for it; else the node's refusal. */
async function whenUnsupported(
  behaviour: MethodBehaviour,
  chain: Chain,
  params: readonly unknown[],
  error: unknown,
): Promise<unknown> {
  if (behaviour.whenUnsupported === undefined || !(error instanceof MethodNotServedError)) throw error;
  const result = await behaviour.whenUnsupported(chain, params);
  if (result === undefined) throw error;
  return result;
}
