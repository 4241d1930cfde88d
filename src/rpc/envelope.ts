/** JSON-RPC 2.0 envelopes: reading requests and writing responses as JSON text. */
import { noteAnswered } from "../errors/answered-codes.js";
import { ChaingateError } from "../errors/chaingate-error.js";
import { RPC_INTERNAL_ERROR } from "../errors/codes.js";
import { invalidRequest } from "../errors/rpc-errors.js";
import { JsonText } from "./response-cache.js";

export type RequestId = string | number | null;

export interface RpcRequest {
  /** `undefined` marks a notification on POST / (no response is due). */
  id: RequestId | undefined;
  method: string;
  params: unknown;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

function readId(value: unknown): RequestId | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value))) {
    return value;
  }
  throw invalidRequest("id must be a string, a number or null");
}

/** The id to echo in an error answer for a body we could not accept: its own when readable. */
export function salvageId(body: unknown, fallback: RequestId): RequestId {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const id = (body as { id?: unknown }).id;
    if (id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id))) return id;
  }
  return fallback;
}

function checkCommon(record: Record<string, unknown>): void {
  if (record.jsonrpc !== undefined && record.jsonrpc !== "2.0") throw invalidRequest('jsonrpc must be "2.0"');
  if (record.params !== undefined && record.params !== null && !Array.isArray(record.params)) {
    throw invalidRequest("params must be an array (positional parameters)");
  }
}

/** A call on POST /: `method` is required and names the method. */
export function readRpcRequest(body: unknown): RpcRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("a request must be a JSON object");
  }
  const record = body as Record<string, unknown>;
  const id = readId(record.id);
  if (record.jsonrpc !== "2.0") throw invalidRequest('jsonrpc must be "2.0"');
  if (typeof record.method !== "string" || record.method === "")
    throw invalidRequest("method must be a string");
  checkCommon(record);
  return { id, method: record.method, params: record.params };
}

/** A call on a Native path: the path names the method, the body (optional) carries id and params. */
export function readNativeRequest(body: unknown, method: string): RpcRequest & { id: RequestId } {
  if (body === undefined || body === null || body === "") return { id: 1, method, params: [] };
  if (Array.isArray(body))
    throw invalidRequest("a Native path takes one request object; send batches to POST /");
  if (typeof body !== "object") throw invalidRequest("the body must be a JSON object");
  const record = body as Record<string, unknown>;
  checkCommon(record);
  return { id: readId(record.id) ?? 1, method, params: record.params ?? [] };
}

/** A result envelope around an id and a result already JSON; its own characters are 33, all ASCII. */
const resultEnvelope = (idText: string, json: string) => `{"jsonrpc":"2.0","id":${idText},"result":${json}}`;
const RESULT_ENVELOPE_BYTES = 33;

export function resultText(id: RequestId, result: unknown): string {
  const json = result instanceof JsonText ? result.text : JSON.stringify(result ?? null);
  return resultEnvelope(JSON.stringify(id), json);
}

/** `resultText(id, result)` and its length in UTF-8 bytes, the result's counted once (not the whole text each time). */
export function resultAnswer(id: RequestId, result: JsonText): { text: string; byteLength: number } {
  // A finite number's text is the same from String, without JSON.stringify's call (1e400 parses
  // as Infinity, which JSON writes as null).
  const idText = typeof id === "number" && Number.isFinite(id) ? String(id) : JSON.stringify(id);
  return {
    text: resultEnvelope(idText, result.text),
    // A number's or null's text is ASCII; only a string id may hold more bytes than characters.
    byteLength:
      RESULT_ENVELOPE_BYTES +
      (typeof id === "string" ? Buffer.byteLength(idText) : idText.length) +
      result.byteLength,
  };
}

export function errorObject(error: unknown): RpcErrorObject {
  if (error instanceof ChaingateError) {
    noteAnswered(error.code);
    if (error.code === "NODE_ERROR") {
      // A node's own error passes through unchanged, data included (revert data must survive).
      return error.data === undefined
        ? { code: error.rpcCode, message: error.message }
        : { code: error.rpcCode, message: error.message, data: error.data };
    }
    const extra = typeof error.data === "object" && error.data !== null ? error.data : {};
    return {
      code: error.rpcCode,
      message: error.message,
      data: { code: error.code, retryable: error.retryable, ...extra },
    };
  }
  noteAnswered("INTERNAL");
  return {
    code: RPC_INTERNAL_ERROR,
    message: "Internal error",
    data: { code: "INTERNAL", retryable: false },
  };
}

export function errorText(id: RequestId, error: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(errorObject(error))}}`;
}
