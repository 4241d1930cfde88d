/** Answers single JSON-RPC node reads and `eth_sendTransaction` on `POST /` (and cache hits on Native paths) straight from Node's HTTP server, before Fastify's per-request pipeline. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { KeyRing, Tenant } from "../auth/key-ring.js";
import type { AccessLog } from "../logging/access-log.js";
import type { Metrics } from "../metrics/metrics.js";
import type { RpcDispatcher } from "../rpc/dispatcher.js";
import { type RpcRequest, readNativeRequest, readRpcRequest, resultAnswer } from "../rpc/envelope.js";
import { tracingOn } from "../tracing/spans.js";
import type { Chain, ChainRegistry } from "../upstream/chain-registry.js";
import { JsonText } from "../upstream/json-text.js";
import { type RateLimiters, type RequestsInFlight, takeToken } from "./access-control.js";
import { type AnswerOptions, answerCall, plainAnswerOf } from "./answer-call.js";
import type { BrowserGuardOptions } from "./browser-guard.js";
import { CallTemplates } from "./call-templates.js";
import { admitCaller, idempotencyKeyOf, requestIdOf, writeFastAnswer } from "./fast-admission.js";
import { parseJsonText } from "./json-body.js";
import { JSON_TYPE } from "./jsonrpc-context.js";
import { handOn, readBody } from "./read-ahead.js";

export interface FastPathOptions {
  keys: KeyRing;
  limiters: RateLimiters;
  inFlight: RequestsInFlight;
  guard: Omit<BrowserGuardOptions, "keys">;
  chains: ChainRegistry;
  dispatcher: RpcDispatcher;
  metrics: Metrics;
  maxResponseBytes: number;
  /** Where an unexpected error in a call is written (the full path writes it to the request's log). */
  logger: Logger;
  /** Where each answered request's line goes; none while requests are not logged. */
  accessLog?: AccessLog | undefined;
}

/** What the fast path admitted: the caller, its chain, the Native path's method (none on `POST /`), its slot. */
interface Admitted {
  tenant: Tenant | null;
  chain: Chain;
  native: string | undefined;
  release: () => void;
}

const NATIVE_FIELDS = new Set(["id", "jsonrpc", "method", "params"]);

/** A Native body holding only the fields its route's schema declares. */
function nativeShaped(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  for (const key in body) if (!NATIVE_FIELDS.has(key)) return false;
  return true;
}

/** Larger bodies go the whole way: a call the cache can answer is a few hundred bytes. */
const MAX_BODY_BYTES = 8 * 1024;

/**
 * A cache hit costs little of its own (a lookup and a string), but through Fastify it paid about
 * 20 µs for the framework's pipeline against 20 µs for the socket write itself (#17); a forwarded
 * read paid the same on top of the node's time. This path answers what it can answer exactly as the
 * full path would: a single call of a node read the cache may hold (from the cache at once, or from
 * the node through the same dispatcher) on `POST /`, or an `eth_sendTransaction` there (decision
 * 163), from a caller the same checks admit (an API key known without a database read, or without
 * keys a Host the browser guard accepts and no Origin; a place under the key's requests in flight;
 * a read token). Everything else, and anything
 * refused, goes to Fastify unchanged, with the body already read, so every refusal keeps its one
 * shape and place. Each answer writes its access-log line as the full path's would, with the method.
 */
export class ReadFastPath {
  /** Bodies answered from the cache, kept to be known again (decision 221). */
  private readonly templates = new CallTemplates();

  /** How an asked call's answer is written: made once, not an object and a closure a request. */
  private readonly answerOptions: AnswerOptions;

  constructor(private readonly options: FastPathOptions) {
    this.answerOptions = {
      maxResponseBytes: options.maxResponseBytes,
      logUnexpected: (error: unknown) =>
        options.logger.error({ err: error }, "unexpected error in JSON-RPC call"),
    };
  }

  serve(
    request: IncomingMessage,
    response: ServerResponse,
    next: (request: IncomingMessage, response: ServerResponse) => void,
  ): void {
    const admitted = this.admit(request, response);
    if (admitted === undefined) {
      next(request, response);
      return;
    }
    const started = performance.now();
    readBody(request, (body) => {
      if (this.answer(request, response, body, admitted, started)) return;
      admitted.release();
      handOn(request, body);
      next(request, response);
    });
  }

  /** The caller and the chain when the headers allow the fast path; undefined hands the request on untouched. */
  private admit(request: IncomingMessage, response: ServerResponse): Admitted | undefined {
    const { chains, dispatcher } = this.options;
    if (request.method !== "POST" || request.url === undefined) return undefined;
    // `POST /`, or a Native path of a read the cache may hold (no query string: the chain by header).
    const native = request.url === "/" ? undefined : request.url.slice(1);
    if (native !== undefined && !dispatcher.isCacheableRead(native)) return undefined;
    // A consensus read asks several upstreams: never a cached answer.
    if (request.headers["chaingate-consensus"] !== undefined) return undefined;
    const caller = admitCaller(request, response, this.options, MAX_BODY_BYTES);
    if (caller === undefined) return undefined;
    let chain: Chain;
    try {
      chain = chains.select(undefined, request.headers["x-chain-id"]);
    } catch {
      caller.release();
      return undefined;
    }
    // Written out, not spread from `caller`: V8 (Node 20) builds `{ ...o, more }` through a slow
    // path, about 2 µs a call measured alone, and its object slowed every later read of it; a
    // cache hit cost a fifth more CPU for it (decision 170).
    return { tenant: caller.tenant, release: caller.release, chain, native };
  }

  /**
   * Answers a cacheable read, from the cache at once or from the node; false when the request is
   * not one (or the rate limit refuses it), having written nothing and taken nothing.
   */
  private answer(
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
    admitted: Admitted,
    started: number,
  ): boolean {
    const { dispatcher, limiters, maxResponseBytes } = this.options;
    const text = body.toString("utf8");
    const url = request.url ?? "/";
    // The same call as one answered from the cache before, but for its id: nothing to parse or check.
    const known = this.templates.find(admitted.chain.chainId, url, text);
    let call: RpcRequest;
    if (known !== undefined) call = { id: known.id, method: known.plain.method, params: known.params };
    else
      try {
        const parsed = parseJsonText(text);
        if (admitted.native === undefined) call = readRpcRequest(parsed);
        else {
          // Only what the Native route's schema knows; anything else is its to refuse.
          if (!nativeShaped(parsed)) return false;
          call = readNativeRequest(parsed, admitted.native);
        }
      } catch {
        return false;
      }
    // eth_sendTransaction on `POST /` (tracing off: its spans are named by the full path's route):
    // custody signs, records and sends it the dispatcher's whole way, without the framework's.
    const sends = call.method === "eth_sendTransaction" && admitted.native === undefined && !tracingOn();
    // A notification answers 204 on the full path.
    if (call.id === undefined || !(sends || dispatcher.isCacheableRead(call.method))) return false;
    const { tenant, chain } = admitted;
    const remote = request.socket.remoteAddress;
    if (!takeToken(limiters, tenant, remote, "read").ok) return false;
    const id = call.id;
    const caller = tenant?.keyId ?? `ip:${remote}`;
    const plain = known?.plain ?? (sends ? undefined : dispatcher.plainCall(chain, call.method, call.params));
    // A Native path's miss goes its route's way (its schema's refusals, its answer to a node error).
    let read =
      plain === undefined
        ? undefined
        : admitted.native === undefined
          ? dispatcher.plainRead(chain, plain, caller)
          : dispatcher.cachedAnswer(chain, plain);
    if (read instanceof JsonText) {
      // Answered from the cache: a call likely to come again.
      if (known === undefined && plain !== undefined)
        this.templates.learn(admitted.chain.chainId, url, text, id, call.params, plain);
      const hit = resultAnswer(id, read);
      if (hit.byteLength <= maxResponseBytes) {
        this.write(request, response, call.method, tenant, remote, hit.text, started, hit.byteLength);
        return true;
      }
      // Larger than the cap: refused in the whole way's shape.
      read = undefined;
    }
    if (admitted.native !== undefined) return false;
    const options = this.answerOptions;
    if (read !== undefined) {
      void plainAnswerOf(id, read, options).then((answer) =>
        this.write(request, response, call.method, tenant, remote, answer.text, started, answer.byteLength),
      );
      return true;
    }
    // Not a plain read (or refused): the dispatcher's whole way, which says why.
    const answered = answerCall(
      dispatcher,
      chain,
      id,
      call.method,
      call.params,
      { tenant: caller, owner: tenant?.keyId ?? null, idempotencyKey: idempotencyKeyOf(request) },
      options,
    );
    void answered.then((answer) =>
      this.write(request, response, call.method, tenant, remote, answer, started),
    );
    return true;
  }

  private write(
    request: IncomingMessage,
    response: ServerResponse,
    method: string,
    tenant: Tenant | null,
    remoteAddress: string | undefined,
    text: string,
    started: number,
    byteLength?: number,
  ): void {
    // `/` or the Native path, which is `/` and the method (see `admit`): no path joined per answer.
    const url = request.url ?? "/";
    writeFastAnswer(response, this.options, {
      id: requestIdOf(request),
      url,
      status: 200,
      type: JSON_TYPE,
      text,
      byteLength,
      started,
      tenant,
      rpc: method,
      remoteAddress,
    });
  }
}
