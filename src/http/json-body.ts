/** Reads request bodies as JSON text ourselves, so malformed input becomes our error shape, not Fastify's. */
import type { FastifyRequest } from "fastify";
import { parseError } from "../errors/rpc-errors.js";

/** Deeper than any real JSON-RPC call; bounds the recursion of everything that walks a body later. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a parsed value holds an array or object more than `limit` levels deep. It walks the
 * parsed value, not the text: V8's JSON.parse does not recurse, and a walk visits each value
 * once where a scan of the text visited every character (a 4 KB signed transaction's hex, or a
 * call's 180 bytes at 4.7k instructions of a 130k cache hit); it stops at the limit, so its own
 * recursion is bounded.
 */
function nestsDeeper(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (nestsDeeper(value[i], limit - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (nestsDeeper(record[key], limit - 1)) return true;
  return false;
}

/** Any character `trim()` would keep: `\s` is the same set (WhiteSpace and LineTerminator). */
const NOT_BLANK = /\S/;

export function parseJsonText(text: string): unknown {
  // A search that stops at the first character, not a trimmed copy of every body.
  if (!NOT_BLANK.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw parseError((error as Error).message);
  }
  if (nestsDeeper(value, MAX_JSON_DEPTH))
    throw parseError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** Fastify content-type parser for every media type (clients often omit or mislabel it). */
export function jsonBodyParser(
  _request: FastifyRequest,
  body: string,
  done: (error: Error | null, value?: unknown) => void,
): void {
  try {
    done(null, parseJsonText(body));
  } catch (error) {
    done(error as Error);
  }
}
