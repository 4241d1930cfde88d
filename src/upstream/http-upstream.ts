/** One node reached over HTTP: sends JSON-RPC calls and sorts failures into faults and answers. */
import { Pool } from "undici";
import { ChaingateError } from "../errors/chaingate-error.js";
import { classifyNodeError } from "../errors/node-errors.js";
import { NodeRpcError, upstreamUnavailable } from "../errors/rpc-errors.js";

export interface UpstreamCall {
  method: string;
  params: readonly unknown[];
}

/**
 * The node closed the connection under the call (a restart, a proxy's idle timeout on a kept-alive
 * connection, a reset): nothing was answered. Timeouts are not among them: a node that did not
 * answer in time is not asked the same thing twice by one call.
 */
const DROPPED = new Set(["UND_ERR_SOCKET", "UND_ERR_CLOSED", "ECONNRESET", "EPIPE"]);
/** Sends, which the node may have received before the drop: never repeated here. */
const NOT_REPEATED = new Set(["eth_sendRawTransaction", "eth_sendTransaction", "eth_sendRawTransactionSync"]);

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
  }

  private readonly authorization: string | undefined;

  private async post(body: string): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.authorization) headers.authorization = this.authorization;
    const response = await this.pool.request({ path: this.path, method: "POST", headers, body });
    return { status: response.statusCode, text: await readCapped(response.body, MAX_NODE_ANSWER_BYTES) };
  }

  /** Sends one call; resolves to the node's `result`, throws NodeRpcError for answers, retryable errors for faults. */
  async call({ method, params }: UpstreamCall): Promise<unknown> {
    const id = this.nextId++;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    let text: string;
    let status: number;
    try {
      ({ status, text } = await this.post(body).catch((error: unknown) => {
        // A read whose kept-alive connection the node closed before answering: once more, on a fresh one.
        if (!isDropped(error) || NOT_REPEATED.has(method)) throw error;
        return this.post(body);
      }));
    } catch (error) {
      if (error instanceof ChaingateError) throw error;
      throw upstreamUnavailable(`${this.label}: ${describeTransportError(error)}`, error);
    }
    if (status === 429 || status >= 500) {
      throw upstreamUnavailable(`${this.label} answered HTTP ${status}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw upstreamUnavailable(`${this.label} answered HTTP ${status} with a body that is not JSON`, error);
    }
    if (typeof parsed !== "object" || parsed === null) {
      throw upstreamUnavailable(`${this.label} answered a JSON-RPC envelope that is not an object`);
    }
    const envelope = parsed as {
      result?: unknown;
      error?: { code?: unknown; message?: unknown; data?: unknown };
    };
    if (envelope.error !== undefined && envelope.error !== null) {
      const code = typeof envelope.error.code === "number" ? envelope.error.code : -32603;
      const message = typeof envelope.error.message === "string" ? envelope.error.message : "node error";
      if (classifyNodeError(message, code) === "fault") {
        throw upstreamUnavailable(`${this.label}: ${message}`);
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

/** Reads a body as text, giving up (and closing it) past `max` bytes. */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  max: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new ChaingateError(`the node's answer is larger than ${max / 1048576} MiB`, {
        code: "RESPONSE_TOO_LARGE",
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

function describeTransportError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return "timed out";
    return typeof code === "string" ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}
