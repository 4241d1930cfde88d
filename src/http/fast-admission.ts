/** What the fast paths share: who they may answer (the caller the full path's guards would admit, read off the headers alone, with its place among the key's requests in flight), and how an answer is written, counted and logged. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KeyRing, Tenant } from "../auth/key-ring.js";
import type { AccessLog } from "../logging/access-log.js";
import type { Metrics } from "../metrics/metrics.js";
import { bearerKey, type RequestsInFlight } from "./access-control.js";
import { type BrowserGuardOptions, hostAllowed } from "./browser-guard.js";
import { newRequestId } from "./request-id.js";

export interface AdmissionOptions {
  keys: KeyRing;
  inFlight: RequestsInFlight;
  guard: Omit<BrowserGuardOptions, "keys">;
}

/** An admitted caller: its key (null without keys) and its slot, given back by `release` or when the response closes. */
export interface Caller {
  tenant: Tenant | null;
  release: () => void;
}

const NOTHING_HELD = () => {};

/**
 * A Content-Length header's value as a number (NaN when absent or not plain digits). Node's parser
 * has checked its digits already; the loop spares Number's conversion call (about 0.3k a request).
 */
export function contentLengthOf(header: string | undefined): number {
  if (header === undefined || header.length === 0 || header.length > 15) return Number.NaN;
  let size = 0;
  for (let i = 0; i < header.length; i++) {
    const digit = header.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return Number.NaN;
    size = size * 10 + digit;
  }
  return size;
}

/**
 * The caller when the full path would admit it without a database read: an API key already known,
 * or without keys a Host the browser guard accepts. Browsers (an Origin: CORS answers), upgrades,
 * chunked bodies and bodies over `maxBodyBytes` are the full path's. Undefined takes nothing.
 */
export function admitCaller(
  request: IncomingMessage,
  response: ServerResponse,
  options: AdmissionOptions,
  maxBodyBytes: number,
): Caller | undefined {
  const headers = request.headers;
  if (
    headers.origin !== undefined ||
    headers.upgrade !== undefined ||
    headers["transfer-encoding"] !== undefined
  )
    return undefined;
  const size = contentLengthOf(headers["content-length"]);
  if (!(size > 0 && size <= maxBodyBytes)) return undefined;
  if (!options.keys.enabledNow)
    return hostAllowed(headers.host, options.guard) ? { tenant: null, release: NOTHING_HELD } : undefined;
  const key = bearerKey(request);
  const tenant = key === undefined ? undefined : options.keys.known(key);
  if (tenant === undefined) return undefined;
  const release = options.inFlight.enter(tenant.keyId, response);
  return release === undefined ? undefined : { tenant, release };
}

/** The request's id: the caller's `X-Request-Id`, as Fastify takes it, or a fresh one. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && given !== "" ? given : newRequestId();
}

/** The request's Idempotency-Key, as the routes read it (a send made twice answers once). */
export function idempotencyKeyOf(request: IncomingMessage): string | undefined {
  const header = request.headers["idempotency-key"];
  return typeof header === "string" ? header : undefined;
}

/** Where a fast answer is counted and logged, as the full path counts and logs its route's. */
export interface AnswerRecords {
  metrics: Metrics;
  accessLog?: AccessLog | undefined;
}

/** One fast answer: what is written, and how it is counted and logged. */
export interface FastAnswer {
  id: string;
  /** The route the full path would name (metrics and access log). */
  url: string;
  status: number;
  type: string;
  text: string;
  /** The text's UTF-8 length where the caller knows it (a cached answer's). */
  byteLength: number | undefined;
  started: number;
  tenant: Tenant | null;
  /** The JSON-RPC method, for the access log. */
  rpc: string | undefined;
  /** The caller's address, read once by the path (each read of the socket's is a call into its getter). */
  remoteAddress: string | undefined;
}

/**
 * Writes a fast path's answer with the headers the full path gives (its type, its length, the
 * request id), then counts and logs it. Nothing is written to a caller who went away meanwhile.
 */
export function writeFastAnswer(response: ServerResponse, records: AnswerRecords, answer: FastAnswer): void {
  if (response.destroyed || response.headersSent) return;
  const bytes = answer.byteLength ?? Buffer.byteLength(answer.text);
  response.writeHead(answer.status, {
    "content-type": answer.type,
    "content-length": bytes,
    "x-request-id": answer.id,
  });
  // A text as long in UTF-8 bytes as in UTF-16 units is all ASCII: the same bytes in Latin-1, which
  // the socket's write copies where UTF-8 is encoded character by character (decision 224).
  response.end(answer.text, bytes === answer.text.length ? "latin1" : "utf8");
  const ms = performance.now() - answer.started;
  records.metrics.observeFastAnswer(answer.url, ms / 1000, answer.status);
  records.accessLog?.record({
    id: answer.id,
    method: "POST",
    url: answer.url,
    status: answer.status,
    ms,
    remoteAddress: answer.remoteAddress,
    key: answer.tenant?.keyId,
    // Always written, undefined or not: an object spread here cost every answer a slow path (decision 170).
    rpc: answer.rpc,
  });
}
