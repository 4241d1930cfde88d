/** One node reached over HTTP: sends JSON-RPC calls and sorts failures into faults and answers. */
import { Pool } from "undici";
import { ChaingateError } from "../errors/chaingate-error.js";
import { classifyNodeError, isRateLimit, revertDataOf } from "../errors/node-errors.js";
import {
  MethodNotServedError,
  NodeRpcError,
  standardRevert,
  UpstreamRateLimited,
  upstreamUnavailable,
} from "../errors/rpc-errors.js";
import { inNodeCall, tracingOn } from "../tracing/spans.js";
import { type NodeAnswer, readAnswer } from "./answer-reader.js";
import type { CallAbort } from "./call-abort.js";
import type { TraitsOf } from "./call-traits.js";
import { envelopeParts, resultJsonText } from "./json-text.js";

export interface UpstreamCall {
  method: string;
  params: readonly unknown[];
  /**
   * May share one HTTP request with the other batchable calls of the same turn (a JSON-RPC batch):
   * fewer requests for the node and for us, for callers that make many calls at once (the signing
   * pipeline, the tracker), at the cost of waiting for the batch's slowest answer.
   */
  batch?: boolean;
  /**
   * Answer the result as the JSON text the node sent (a JsonText, with an array's item count),
   * not parsed: for large answers passed on as they are (log queries). Never batched.
   */
  asText?: boolean;
  /** Aborts the request (the other half of a hedged read answered first). Never batched. */
  signal?: CallAbort;
  /**
   * `params` as JSON text, when the caller has already written them (the cache key): sent as they
   * are, not written again. It must be exactly `JSON.stringify(params)`.
   */
  paramsText?: string | undefined;
}

interface Waiting {
  call: UpstreamCall;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** Calls per JSON-RPC batch: below the limits of common nodes and providers (geth: 1000). */
export const MAX_BATCH = 100;

/**
 * The node closed the connection under the call (a restart, a proxy's idle timeout on a kept-alive
 * connection, a reset): nothing was answered. Timeouts are not among them: a node that did not
 * answer in time is not asked the same thing twice by one call.
 */
const DROPPED = new Set(["UND_ERR_SOCKET", "UND_ERR_CLOSED", "ECONNRESET", "EPIPE"]);

function isDropped(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && DROPPED.has(code);
}

/** No node answer larger than this is read into memory (the answer ceiling to clients is lower). */
export const MAX_NODE_ANSWER_BYTES = 256 * 1024 * 1024;

export class HttpUpstream {
  readonly url: string;
  /** scheme://host:port only: a hosted provider's path or query holds its project key. */
  label: string;
  private readonly pool: Pool;
  private readonly path: string;
  private nextId = 1;

  constructor(
    url: string,
    readonly timeoutMs: number,
    /** Per method: whether it may be asked again after a drop, and shared within a turn. */
    private readonly traits: TraitsOf,
    /** The chain it serves, named in a refusal of a method it lacks (unknown while a URL is probed). */
    private readonly chainId?: number,
  ) {
    const parsed = new URL(url);
    this.url = url;
    // Labels go to logs, metrics, /network and error messages: never credentials, path or query.
    this.label = `${parsed.protocol}//${parsed.host}`;
    this.path = `${parsed.pathname}${parsed.search}`;
    this.pool = new Pool(parsed.origin, {
      connections: 64,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    if (parsed.username || parsed.password) {
      this.authorization = `Basic ${Buffer.from(
        `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`,
      ).toString("base64")}`;
    }
    this.headers =
      this.authorization === undefined
        ? { "content-type": "application/json" }
        : { "content-type": "application/json", authorization: this.authorization };
  }

  private readonly authorization: string | undefined;

  /** The request headers, the same for every call (undici copies them into each request). */
  private readonly headers: Record<string, string>;

  private post(body: string, signal?: CallAbort): Promise<NodeAnswer> {
    return readAnswer(
      this.pool,
      { path: this.path, method: "POST", headers: this.headers, body },
      MAX_NODE_ANSWER_BYTES,
      signal,
    );
  }

  /** Calls waiting for this turn's batch (see `call`). */
  private waiting: Waiting[] = [];
  /** This turn's shared reads (the `shared` trait), by method and parameters. */
  private shared = new Map<string, Promise<unknown>>();
  /** Cleared when the node refused a batch: it is then asked one call at a time. */
  private batches = true;

  /**
   * Sends one call; resolves to the node's `result`, throws NodeRpcError for answers, retryable
   * errors for faults. A call marked `batch` shares one HTTP request (a JSON-RPC batch) with the
   * other batchable calls made in the same turn of the event loop.
   */
  call(call: UpstreamCall): Promise<unknown> {
    return tracingOn() ? inNodeCall(this.label, call.method, () => this.ask(call)) : this.ask(call);
  }

  private ask(call: UpstreamCall): Promise<unknown> {
    if (!call.batch || !this.batches || call.asText || call.signal) return this.single(call);
    // The signing pipeline asks the same sender's balance, the same recipient's code, for every request of a turn.
    const key = this.traits(call.method).shared ? `${call.method}${JSON.stringify(call.params)}` : undefined;
    const same = key === undefined ? undefined : this.shared.get(key);
    if (same) return same;
    const answer = new Promise((resolve, reject) => {
      if (this.waiting.push({ call, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
    if (key !== undefined) this.shared.set(key, answer);
    return answer;
  }

  private async single({ method, params, paramsText, asText, signal }: UpstreamCall): Promise<unknown> {
    const id = this.nextId++;
    // Joined, not JSON.stringify of the envelope: V8 (Node 20) writes an object through its slow
    // general path, 7,000 instructions a forwarded read, twice what the parameters alone cost.
    const body = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsText ?? JSON.stringify(params)}}`;
    let answer: NodeAnswer;
    try {
      answer = await this.post(body, signal);
    } catch (error) {
      // A read whose kept-alive connection the node closed before answering: once more, on a fresh one.
      if (!isDropped(error) || this.traits(method).send) throw this.transportFault(error);
      try {
        answer = await this.post(body, signal);
      } catch (again) {
        throw this.transportFault(again);
      }
    }
    const { status, text } = answer;
    this.checkStatus(status);
    return asText ? this.resultText(method, answer) : this.resultOf(method, this.parse(status, text), status);
  }

  /** As resultOf, with the result kept as the node's text (only the small error member is parsed). */
  private resultText(method: string, answer: NodeAnswer): unknown {
    const { status, text } = answer;
    let members: ReturnType<typeof envelopeParts>;
    try {
      members = envelopeParts(text);
    } catch (error) {
      throw upstreamUnavailable(
        `${this.label} answered HTTP ${status} with a body that is not a JSON object`,
        error,
      );
    }
    const { error, result } = members;
    if (error !== undefined && error.text !== "null")
      return this.resultOf(method, { error: JSON.parse(error.text) }, status);
    if (result === undefined) return this.resultOf(method, {}, status);
    if (status !== 200) throw upstreamUnavailable(`${this.label} answered HTTP ${status}`);
    return resultJsonText(result, answer.bytes, answer.ascii);
  }

  /** Sends the calls waiting for this turn, MAX_BATCH at a time; one alone goes as a plain call. */
  private flush(): void {
    const waiting = this.waiting;
    this.waiting = [];
    this.shared.clear();
    for (let i = 0; i < waiting.length; i += MAX_BATCH) {
      const part = waiting.slice(i, i + MAX_BATCH);
      if (part.length === 1) {
        const only = part[0]!;
        this.single(only.call).then(only.resolve, only.reject);
      } else {
        void this.sendBatch(part);
      }
    }
  }

  private async sendBatch(part: Waiting[]): Promise<void> {
    const ids = part.map(() => this.nextId++);
    const body = JSON.stringify(
      part.map((w, i) => ({ jsonrpc: "2.0", id: ids[i], method: w.call.method, params: w.call.params })),
    );
    let status: number;
    let text: string;
    try {
      ({ status, text } = await this.post(body));
    } catch (error) {
      // As for one call: reads on a dropped connection are asked once more (each alone); sends,
      // which the node may have taken, are not repeated here.
      for (const w of part) {
        if (isDropped(error) && !this.traits(w.call.method).send)
          this.single(w.call).then(w.resolve, w.reject);
        else w.reject(this.transportFault(error));
      }
      return;
    }
    let answers: unknown;
    try {
      this.checkStatus(status);
      answers = this.parse(status, text);
    } catch (error) {
      for (const w of part) w.reject(error);
      return;
    }
    if (!Array.isArray(answers)) {
      // A node or provider that does not take batches answers the batch with one error: nothing in
      // it was run. From now on it is asked one call at a time, starting with these.
      this.batches = false;
      for (const w of part) this.single(w.call).then(w.resolve, w.reject);
      return;
    }
    const byId = new Map<unknown, unknown>();
    for (const answer of answers) {
      if (typeof answer === "object" && answer !== null) byId.set((answer as { id?: unknown }).id, answer);
    }
    part.forEach((w, i) => {
      const answer = byId.get(ids[i]);
      if (answer === undefined) {
        // Whether a send without an answer was taken is unknown: the caller treats it as a fault.
        w.reject(upstreamUnavailable(`${this.label} left call ${w.call.method} of a batch unanswered`));
        return;
      }
      try {
        w.resolve(this.resultOf(w.call.method, answer, status));
      } catch (error) {
        w.reject(error);
      }
    });
  }

  private transportFault(error: unknown): ChaingateError {
    if (error instanceof ChaingateError) return error;
    return upstreamUnavailable(`${this.label}: ${describeTransportError(error)}`, error);
  }

  private checkStatus(status: number): void {
    if (status === 429) throw new UpstreamRateLimited(`${this.label} answered HTTP 429`);
    if (status >= 500) throw upstreamUnavailable(`${this.label} answered HTTP ${status}`);
  }

  private parse(status: number, text: string): unknown {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw upstreamUnavailable(`${this.label} answered HTTP ${status} with a body that is not JSON`, error);
    }
    if (typeof parsed !== "object" || parsed === null) {
      throw upstreamUnavailable(`${this.label} answered a JSON-RPC envelope that is not an object`);
    }
    return parsed;
  }

  /** One JSON-RPC envelope: its result, or the node's error (an answer or a fault). */
  private resultOf(method: string, parsed: unknown, status: number): unknown {
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw upstreamUnavailable(`${this.label} answered a JSON-RPC envelope that is not an object`);
    }
    const envelope = parsed as {
      result?: unknown;
      error?: { code?: unknown; message?: unknown; data?: unknown };
    };
    if (envelope.error !== undefined && envelope.error !== null) {
      const code = typeof envelope.error.code === "number" ? envelope.error.code : -32603;
      const message = typeof envelope.error.message === "string" ? envelope.error.message : "node error";
      const kind = classifyNodeError(message, code, envelope.error.data);
      if (kind === "fault")
        throw isRateLimit(message, code)
          ? new UpstreamRateLimited(`${this.label}: ${message}`)
          : upstreamUnavailable(`${this.label}: ${message}`);
      if (kind === "unsupported")
        throw new MethodNotServedError(
          method,
          this.chainId === undefined ? `the node at ${this.label}` : `the nodes of chain ${this.chainId}`,
          code,
          message,
        );
      // Reverts enter in the standard's shape, whatever the node's (Hardhat, Ganache, Nethermind, Besu).
      if (kind === "reverted") {
        const standard = standardRevert(revertDataOf(envelope.error.data));
        // Code 3 is the standard already; some nodes (older Erigon) leave the reason out of its message.
        if (code !== 3 || (message === "execution reverted" && standard.message !== message)) throw standard;
      }
      throw new NodeRpcError(code, message, envelope.error.data);
    }
    if (status !== 200) throw upstreamUnavailable(`${this.label} answered HTTP ${status}`);
    if (!("result" in envelope)) {
      throw upstreamUnavailable(`${this.label} answered an envelope without result or error`);
    }
    return envelope.result;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

function describeTransportError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return "timed out";
    return typeof code === "string" ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}
