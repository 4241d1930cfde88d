/** Reads request bodies as JSON text ourselves, so malformed input becomes our error shape, not Fastify's. */
import type { FastifyRequest } from "fastify";
import { parseError } from "../errors/rpc-errors.js";

/** Deeper than any real JSON-RPC call; bounds the recursion of everything that walks a body later. */
export const MAX_JSON_DEPTH = 64;

function depthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Any character `trim()` would keep: `\s` is the same set (WhiteSpace and LineTerminator). */
const NOT_BLANK = /\S/;

export function parseJsonText(text: string): unknown {
  // A search that stops at the first character, not a trimmed copy of every body.
  if (!NOT_BLANK.test(text)) return undefined;
  if (depthExceeds(text, MAX_JSON_DEPTH))
    throw parseError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw parseError((error as Error).message);
  }
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
